// mobilenet_v2.js - torchvision 0.14's MobileNetV2 (torchvision/models/mobilenetv2.py) in
// kindling: inverted residual blocks (1x1 expand -> 3x3 depthwise -> 1x1 linear projection, ReLU6),
// torchvision's module names (features.N.conv.M..., classifier.1), widthMult and roundNearest
// as in torchvision.
'use strict';

module.exports = function makeMobileNetV2(kd, { Activation, Chain, convNormActivation, makeDivisible, runChain, disposeAfter }) {
  const { nn } = kd;
  const relu6 = () => new Activation('relu6');

  class InvertedResidual extends nn.Module {
    constructor(inp, oup, stride, expandRatio) {
      super();
      if (stride !== 1 && stride !== 2) throw new RangeError(`stride should be 1 or 2 insted of ${stride}`);
      this.stride = stride;
      const hidden = Math.round(inp * expandRatio);
      this.useResConnect = stride === 1 && inp === oup;
      const layers = [];
      if (expandRatio !== 1) layers.push(convNormActivation(inp, hidden, { kernelSize: 1, activation: relu6() }));
      layers.push(
        convNormActivation(hidden, hidden, { stride, groups: hidden, activation: relu6() }),
        new nn.Conv2d(hidden, oup, 1, { bias: false }),
        new nn.BatchNorm2d(oup));
      this.conv = new Chain(...layers);
      this.outChannels = oup;
    }
    forward(x) {
      const y = this.conv(x);
      return this.useResConnect ? y.add_(x) : y;
    }
  }

  const SETTING = [ // t (expansion), c (channels), n (blocks), s (stride of the first)
    [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1],
  ];

  class MobileNetV2 extends nn.Module {
    /** options: numClasses (1000), widthMult (1), roundNearest (8), dropout (0.2). */
    constructor({ numClasses = 1000, widthMult = 1.0, roundNearest = 8, dropout = 0.2 } = {}) {
      super();
      let input = makeDivisible(32 * widthMult, roundNearest);
      this.lastChannel = makeDivisible(1280 * Math.max(1.0, widthMult), roundNearest);
      const features = [convNormActivation(3, input, { stride: 2, activation: relu6() })];
      for (const [t, c, n, s] of SETTING) {
        const output = makeDivisible(c * widthMult, roundNearest);
        for (let i = 0; i < n; i++) {
          features.push(new InvertedResidual(input, output, i === 0 ? s : 1, t));
          input = output;
        }
      }
      features.push(convNormActivation(input, this.lastChannel, { kernelSize: 1, activation: relu6() }));
      this.features = new Chain(...features);
      this.classifier = new Chain(new nn.Dropout(dropout), new nn.Linear(this.lastChannel, numClasses));
    }
    forward(x) {
      const f = this.features(x);
      const pooled = runChain([(t) => kd.nn.functional.adaptiveAvgPool2d(t, [1, 1]), (t) => t.flatten(1)], f);
      f.dispose();
      return disposeAfter(pooled, (t) => this.classifier(t));
    }
  }

  return { MobileNetV2, InvertedResidual, mobilenetV2: (options) => new MobileNetV2(options) };
};
