// vgg.js - pytorch/examples' fast_neural_style/neural_style/vgg.py in kindling: the first 23
// layers of torchvision's VGG-16 `features` (up to relu4_3) cut into four slices, whose outputs
// (relu1_2, relu2_2, relu3_3, relu4_3) give the perceptual losses.
//
// The original loads torchvision's ImageNet weights (models.vgg16(weights=IMAGENET1K_V1)), which
// are a download. Here: `new Vgg16({requiresGrad, weights})` loads them from `weights`, a
// safetensors file of torchvision's vgg16 state dict (the `features.N.*` entries are used), when
// given; otherwise every convolution gets deterministic weights, uniform in
// +-sqrt(6 / fan_in) (He's bound, so activations keep their scale through the ReLUs) from the LCG
// of lcg.js seeded 7000 + its index in `features`, and zero biases: the same numbers that
// tools/fixtures/pytorch_examples/fast_neural_style.py puts in PyTorch's Vgg16. With them the
// losses train the transformer but do not transfer a style as ImageNet features do.
'use strict';

const kd = require('../../../..');
const { lcgTensor } = require('./lcg');

const nn = kd.nn;

// torchvision's vgg16 'D' configuration, up to and including relu4_3 (features[0..22])
const CFG = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512];

/** torchvision.models.vgg's make_layers(cfg 'D') up to relu4_3: Conv2d(3x3, padding 1), ReLU(inplace), MaxPool2d(2, 2). */
function vgg16Features() {
  const layers = [];
  let inChannels = 3;
  for (const v of CFG) {
    if (v === 'M') {
      layers.push(new nn.MaxPool2d(2, 2));
    } else {
      layers.push(new nn.Conv2d(inChannels, v, 3, { padding: 1 }), new nn.ReLU(true));
      inChannels = v;
    }
  }
  return new nn.Sequential(...layers);
}

/** The deterministic weights described above, in place. */
function deterministicInit_(features) {
  kd.noGrad(() => {
    [...features].forEach((m, i) => {
      if (!(m instanceof nn.Conv2d)) return;
      const fanIn = m.weight.shape.slice(1).reduce((a, b) => a * b, 1);
      const bound = Math.sqrt(6 / fanIn);
      const w = lcgTensor(7000 + i, m.weight.shape, -bound, bound);
      m.weight.copy_(w);
      w.dispose();
      m.bias.zero_();
    });
  });
}

class Vgg16 extends nn.Module {
  constructor({ requiresGrad = false, weights = null } = {}) {
    super();
    const vggPretrainedFeatures = vgg16Features();
    if (weights) {
      const sd = kd.loadSync(weights);
      const features = {};
      for (const [k, v] of Object.entries(sd)) {
        if (k.startsWith('features.') && Number(k.split('.')[1]) < 23) features[k.slice('features.'.length)] = v;
        else v.dispose();
      }
      vggPretrainedFeatures.loadStateDict(features);
    } else {
      deterministicInit_(vggPretrainedFeatures);
    }
    this.slice1 = new nn.Sequential();
    this.slice2 = new nn.Sequential();
    this.slice3 = new nn.Sequential();
    this.slice4 = new nn.Sequential();
    for (let x = 0; x < 4; x++) this.slice1.addModule(String(x), vggPretrainedFeatures[x]);
    for (let x = 4; x < 9; x++) this.slice2.addModule(String(x), vggPretrainedFeatures[x]);
    for (let x = 9; x < 16; x++) this.slice3.addModule(String(x), vggPretrainedFeatures[x]);
    for (let x = 16; x < 23; x++) this.slice4.addModule(String(x), vggPretrainedFeatures[x]);
    if (!requiresGrad) {
      for (const param of this.parameters()) param.requiresGrad = false;
    }
  }

  forward(X) {
    let h = this.slice1(X);
    const hRelu12 = h;
    h = this.slice2(h);
    const hRelu22 = h;
    h = this.slice3(h);
    const hRelu33 = h;
    h = this.slice4(h);
    const hRelu43 = h;
    // the original's namedtuple VggOutputs: an array that also has the names
    const out = [hRelu12, hRelu22, hRelu33, hRelu43];
    return Object.assign(out, { relu1_2: hRelu12, relu2_2: hRelu22, relu3_3: hRelu33, relu4_3: hRelu43 });
  }
}

module.exports = { Vgg16, vgg16Features, deterministicInit_ };
