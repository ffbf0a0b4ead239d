// model.js - pytorch/examples' super_resolution/model.py in kindling: the efficient sub-pixel
// convolutional network (Shi et al. 2016): three convolutions with ReLU, a fourth to
// upscaleFactor^2 channels, and PixelShuffle; weights initialised orthogonally with ReLU's gain.
'use strict';

const kd = require('../../..');

const nn = kd.nn;
const init = kd.nn.init;

class Net extends nn.Module {
  constructor(upscaleFactor) {
    super();

    this.relu = new nn.ReLU();
    this.conv1 = new nn.Conv2d(1, 64, [5, 5], [1, 1], [2, 2]);
    this.conv2 = new nn.Conv2d(64, 64, [3, 3], [1, 1], [1, 1]);
    this.conv3 = new nn.Conv2d(64, 32, [3, 3], [1, 1], [1, 1]);
    this.conv4 = new nn.Conv2d(32, upscaleFactor ** 2, [3, 3], [1, 1], [1, 1]);
    this.pixelShuffle = new nn.PixelShuffle(upscaleFactor);

    this._initializeWeights();
  }

  forward(x) {
    x = this.relu(this.conv1(x));
    x = this.relu(this.conv2(x));
    x = this.relu(this.conv3(x));
    x = this.pixelShuffle(this.conv4(x));
    return x;
  }

  _initializeWeights() {
    init.orthogonal_(this.conv1.weight, init.calculateGain('relu'));
    init.orthogonal_(this.conv2.weight, init.calculateGain('relu'));
    init.orthogonal_(this.conv3.weight, init.calculateGain('relu'));
    init.orthogonal_(this.conv4.weight);
  }
}

module.exports = { Net };
