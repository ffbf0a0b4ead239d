// mobilenet_v3.js - torchvision 0.14's MobileNetV3-Small and -Large
// (torchvision/models/mobilenetv3.py) in kindling: inverted residuals with optional
// squeeze-excitation (ReLU, then Hardsigmoid), Hardswish or ReLU per block, BatchNorm eps 0.001,
// torchvision's module names (features.N.block.M..., classifier.0/3), widthMult, reducedTail and
// dilated as in torchvision.
'use strict';

module.exports = function makeMobileNetV3(kd, { Activation, Chain, convNormActivation, SqueezeExcitation, makeDivisible, runChain, disposeAfter }) {
  const { nn } = kd;
  const BN = { eps: 0.001, momentum: 0.01 };
  const adjust = (c, widthMult) => makeDivisible(c * widthMult, 8);

  class InvertedResidual extends nn.Module {
    /** cnf: {inputChannels, kernel, expandedChannels, outChannels, useSe, useHs, stride, dilation} */
    constructor(cnf) {
      super();
      if (!(cnf.stride >= 1 && cnf.stride <= 2)) throw new RangeError('illegal stride value');
      this.useResConnect = cnf.stride === 1 && cnf.inputChannels === cnf.outChannels;
      const act = () => (cnf.useHs ? new Activation('hardswish') : new nn.ReLU());
      const layers = [];
      if (cnf.expandedChannels !== cnf.inputChannels) {
        layers.push(convNormActivation(cnf.inputChannels, cnf.expandedChannels, { kernelSize: 1, activation: act(), ...BN }));
      }
      layers.push(convNormActivation(cnf.expandedChannels, cnf.expandedChannels, {
        kernelSize: cnf.kernel, stride: cnf.dilation > 1 ? 1 : cnf.stride, dilation: cnf.dilation, groups: cnf.expandedChannels, activation: act(), ...BN,
      }));
      if (cnf.useSe) {
        layers.push(new SqueezeExcitation(cnf.expandedChannels, makeDivisible(Math.floor(cnf.expandedChannels / 4), 8), {
          scaleActivation: () => new Activation('hardsigmoid'),
        }));
      }
      layers.push(convNormActivation(cnf.expandedChannels, cnf.outChannels, { kernelSize: 1, ...BN }));
      this.block = new Chain(...layers);
      this.outChannels = cnf.outChannels;
    }
    forward(x) {
      const y = this.block(x);
      return this.useResConnect ? y.add_(x) : y;
    }
  }

  /** torchvision's _mobilenet_v3_conf: the block configurations and the classifier's hidden width. */
  function mobilenetV3Conf(arch, { widthMult = 1.0, reducedTail = false, dilated = false } = {}) {
    const r = reducedTail ? 2 : 1;
    const d = dilated ? 2 : 1;
    const c = (inputChannels, kernel, expandedChannels, outChannels, useSe, act, stride, dilation) => ({
      inputChannels: adjust(inputChannels, widthMult), kernel, expandedChannels: adjust(expandedChannels, widthMult),
      outChannels: adjust(outChannels, widthMult), useSe, useHs: act === 'HS', stride, dilation,
    });
    if (arch === 'mobilenet_v3_large') {
      return {
        setting: [
          c(16, 3, 16, 16, false, 'RE', 1, 1), c(16, 3, 64, 24, false, 'RE', 2, 1), c(24, 3, 72, 24, false, 'RE', 1, 1),
          c(24, 5, 72, 40, true, 'RE', 2, 1), c(40, 5, 120, 40, true, 'RE', 1, 1), c(40, 5, 120, 40, true, 'RE', 1, 1),
          c(40, 3, 240, 80, false, 'HS', 2, 1), c(80, 3, 200, 80, false, 'HS', 1, 1), c(80, 3, 184, 80, false, 'HS', 1, 1),
          c(80, 3, 184, 80, false, 'HS', 1, 1), c(80, 3, 480, 112, true, 'HS', 1, 1), c(112, 3, 672, 112, true, 'HS', 1, 1),
          c(112, 5, 672, 160 / r, true, 'HS', 2, d), c(160 / r, 5, 960 / r, 160 / r, true, 'HS', 1, d),
          c(160 / r, 5, 960 / r, 160 / r, true, 'HS', 1, d),
        ],
        lastChannel: adjust(1280 / r, widthMult),
      };
    }
    if (arch === 'mobilenet_v3_small') {
      return {
        setting: [
          c(16, 3, 16, 16, true, 'RE', 2, 1), c(16, 3, 72, 24, false, 'RE', 2, 1), c(24, 3, 88, 24, false, 'RE', 1, 1),
          c(24, 5, 96, 40, true, 'HS', 2, 1), c(40, 5, 240, 40, true, 'HS', 1, 1), c(40, 5, 240, 40, true, 'HS', 1, 1),
          c(40, 5, 120, 48, true, 'HS', 1, 1), c(48, 5, 144, 48, true, 'HS', 1, 1), c(48, 5, 288, 96 / r, true, 'HS', 2, d),
          c(96 / r, 5, 576 / r, 96 / r, true, 'HS', 1, d), c(96 / r, 5, 576 / r, 96 / r, true, 'HS', 1, d),
        ],
        lastChannel: adjust(1024 / r, widthMult),
      };
    }
    throw new RangeError(`Unsupported model type ${arch}`);
  }

  class MobileNetV3 extends nn.Module {
    /** setting and lastChannel from mobilenetV3Conf; options: numClasses (1000), dropout (0.2). */
    constructor(setting, lastChannel, { numClasses = 1000, dropout = 0.2 } = {}) {
      super();
      const first = setting[0].inputChannels;
      const layers = [convNormActivation(3, first, { stride: 2, activation: new Activation('hardswish'), ...BN })];
      for (const cnf of setting) layers.push(new InvertedResidual(cnf));
      const lastIn = setting[setting.length - 1].outChannels;
      layers.push(convNormActivation(lastIn, 6 * lastIn, { kernelSize: 1, activation: new Activation('hardswish'), ...BN }));
      this.features = new Chain(...layers);
      this.avgpool = new nn.AdaptiveAvgPool2d(1);
      this.classifier = new Chain(
        new nn.Linear(6 * lastIn, lastChannel), new Activation('hardswish'), new nn.Dropout(dropout), new nn.Linear(lastChannel, numClasses));
    }
    forward(x) {
      const f = runChain([this.features, this.avgpool], x);
      return disposeAfter(disposeAfter(f, (t) => t.flatten(1)), (t) => this.classifier(t));
    }
  }

  const make = (arch) => (options = {}) => {
    const { setting, lastChannel } = mobilenetV3Conf(arch, options);
    return new MobileNetV3(setting, lastChannel, options);
  };
  return {
    MobileNetV3,
    mobilenetV3Conf,
    mobilenetV3Small: make('mobilenet_v3_small'),
    mobilenetV3Large: make('mobilenet_v3_large'),
  };
};
