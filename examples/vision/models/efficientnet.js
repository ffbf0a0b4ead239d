// efficientnet.js - torchvision 0.14's EfficientNet-B0..B7 (torchvision/models/efficientnet.py,
// MBConv blocks) in kindling, for inference: SiLU, squeeze-excitation (SiLU, then sigmoid),
// stochastic depth is the identity in eval mode and so is left out (the module has no state),
// torchvision's module names (features.N.M.block.K..., classifier.1).
'use strict';

module.exports = function makeEfficientNet(kd, { Chain, convNormActivation, SqueezeExcitation, makeDivisible, runChain, disposeAfter }) {
  const { nn } = kd;
  const adjust = (c, widthMult) => makeDivisible(c * widthMult, 8);
  const silu = () => new nn.SiLU();

  class MBConv extends nn.Module {
    /** cnf: {expandRatio, kernel, stride, inputChannels, outChannels}; bn: {eps, momentum} */
    constructor(cnf, bn) {
      super();
      if (!(cnf.stride >= 1 && cnf.stride <= 2)) throw new RangeError('illegal stride value');
      this.useResConnect = cnf.stride === 1 && cnf.inputChannels === cnf.outChannels;
      const expanded = adjust(cnf.inputChannels, cnf.expandRatio);
      const layers = [];
      if (expanded !== cnf.inputChannels) layers.push(convNormActivation(cnf.inputChannels, expanded, { kernelSize: 1, activation: silu(), ...bn }));
      layers.push(
        convNormActivation(expanded, expanded, { kernelSize: cnf.kernel, stride: cnf.stride, groups: expanded, activation: silu(), ...bn }),
        new SqueezeExcitation(expanded, Math.max(1, Math.floor(cnf.inputChannels / 4)), { activation: silu }),
        convNormActivation(expanded, cnf.outChannels, { kernelSize: 1, ...bn }));
      this.block = new Chain(...layers);
      this.outChannels = cnf.outChannels;
    }
    forward(x) {
      const y = this.block(x);
      return this.useResConnect ? y.add_(x) : y;
    }
  }

  // expand ratio, kernel, stride, input channels, output channels, layers (before width/depth multipliers)
  const B_SETTING = [[1, 3, 1, 32, 16, 1], [6, 3, 2, 16, 24, 2], [6, 5, 2, 24, 40, 2], [6, 3, 2, 40, 80, 3],
    [6, 5, 1, 80, 112, 3], [6, 5, 2, 112, 192, 4], [6, 3, 1, 192, 320, 1]];
  // torchvision's per-variant width, depth, dropout and BatchNorm (B5-B7: eps 0.001, momentum 0.01)
  const VARIANTS = {
    b0: [1.0, 1.0, 0.2], b1: [1.0, 1.1, 0.2], b2: [1.1, 1.2, 0.3], b3: [1.2, 1.4, 0.3],
    b4: [1.4, 1.8, 0.4], b5: [1.6, 2.2, 0.4], b6: [1.8, 2.6, 0.5], b7: [2.0, 3.1, 0.5],
  };

  class EfficientNet extends nn.Module {
    /** options: numClasses (1000), widthMult (1), depthMult (1), dropout (0.2), bn ({eps: 1e-5, momentum: 0.1}). */
    constructor({ numClasses = 1000, widthMult = 1.0, depthMult = 1.0, dropout = 0.2, bn = { eps: 1e-5, momentum: 0.1 } } = {}) {
      super();
      const setting = B_SETTING.map(([expandRatio, kernel, stride, i, o, n]) => ({
        expandRatio, kernel, stride, inputChannels: adjust(i, widthMult), outChannels: adjust(o, widthMult), numLayers: Math.ceil(n * depthMult),
      }));
      const layers = [convNormActivation(3, setting[0].inputChannels, { stride: 2, activation: silu(), ...bn })];
      for (const cnf of setting) {
        const stage = [];
        for (let i = 0; i < cnf.numLayers; i++) {
          stage.push(new MBConv(i === 0 ? cnf : { ...cnf, inputChannels: cnf.outChannels, stride: 1 }, bn));
        }
        layers.push(new Chain(...stage));
      }
      const lastIn = setting[setting.length - 1].outChannels;
      layers.push(convNormActivation(lastIn, 4 * lastIn, { kernelSize: 1, activation: silu(), ...bn }));
      this.features = new Chain(...layers);
      this.avgpool = new nn.AdaptiveAvgPool2d(1);
      this.classifier = new Chain(new nn.Dropout(dropout), new nn.Linear(4 * lastIn, numClasses));
    }
    forward(x) {
      const f = runChain([this.features, this.avgpool], x);
      return disposeAfter(disposeAfter(f, (t) => t.flatten(1)), (t) => this.classifier(t));
    }
  }

  const out = { EfficientNet, MBConv };
  for (const [v, [widthMult, depthMult, dropout]] of Object.entries(VARIANTS)) {
    const bn = v >= 'b5' ? { eps: 0.001, momentum: 0.01 } : { eps: 1e-5, momentum: 0.1 };
    out[`efficientnet${v.toUpperCase()}`] = (options = {}) => new EfficientNet({ widthMult, depthMult, dropout, bn, ...options });
  }
  return out;
};
