// transformer_net.js - pytorch/examples' fast_neural_style/neural_style/transformer_net.py in
// kindling: the image transformation network of Johnson et al. (2016): reflection-padded
// convolutions with InstanceNorm, five residual blocks, and nearest-neighbour upsampling followed
// by convolutions (instead of transposed convolutions).
'use strict';

const kd = require('../../../..');

const nn = kd.nn;

class ConvLayer extends nn.Module {
  constructor(inChannels, outChannels, kernelSize, stride) {
    super();
    const reflectionPadding = Math.floor(kernelSize / 2);
    this.reflectionPad = new nn.ReflectionPad2d(reflectionPadding);
    this.conv2d = new nn.Conv2d(inChannels, outChannels, kernelSize, stride);
  }

  forward(x) {
    let out = this.reflectionPad(x);
    out = this.conv2d(out);
    return out;
  }
}

/**
 * ResidualBlock
 * introduced in: https://arxiv.org/abs/1512.03385
 * recommended architecture: http://torch.ch/blog/2016/02/04/resnets.html
 */
class ResidualBlock extends nn.Module {
  constructor(channels) {
    super();
    this.conv1 = new ConvLayer(channels, channels, 3, 1);
    this.in1 = new nn.InstanceNorm2d(channels, { affine: true });
    this.conv2 = new ConvLayer(channels, channels, 3, 1);
    this.in2 = new nn.InstanceNorm2d(channels, { affine: true });
    this.relu = new nn.ReLU();
  }

  forward(x) {
    const residual = x;
    let out = this.relu(this.in1(this.conv1(x)));
    out = this.in2(this.conv2(out));
    out = out.add(residual);
    return out;
  }
}

/**
 * UpsampleConvLayer
 * Upsamples the input and then does a convolution. This method gives better results
 * compared to ConvTranspose2d.
 * ref: http://distill.pub/2016/deconv-checkerboard/
 */
class UpsampleConvLayer extends nn.Module {
  constructor(inChannels, outChannels, kernelSize, stride, upsample = null) {
    super();
    this.upsample = upsample;
    const reflectionPadding = Math.floor(kernelSize / 2);
    this.reflectionPad = new nn.ReflectionPad2d(reflectionPadding);
    this.conv2d = new nn.Conv2d(inChannels, outChannels, kernelSize, stride);
  }

  forward(x) {
    let xIn = x;
    if (this.upsample) {
      xIn = nn.functional.interpolate(xIn, { mode: 'nearest', scaleFactor: this.upsample });
    }
    let out = this.reflectionPad(xIn);
    out = this.conv2d(out);
    return out;
  }
}

class TransformerNet extends nn.Module {
  constructor() {
    super();
    // Initial convolution layers
    this.conv1 = new ConvLayer(3, 32, 9, 1);
    this.in1 = new nn.InstanceNorm2d(32, { affine: true });
    this.conv2 = new ConvLayer(32, 64, 3, 2);
    this.in2 = new nn.InstanceNorm2d(64, { affine: true });
    this.conv3 = new ConvLayer(64, 128, 3, 2);
    this.in3 = new nn.InstanceNorm2d(128, { affine: true });
    // Residual layers
    this.res1 = new ResidualBlock(128);
    this.res2 = new ResidualBlock(128);
    this.res3 = new ResidualBlock(128);
    this.res4 = new ResidualBlock(128);
    this.res5 = new ResidualBlock(128);
    // Upsampling Layers
    this.deconv1 = new UpsampleConvLayer(128, 64, 3, 1, 2);
    this.in4 = new nn.InstanceNorm2d(64, { affine: true });
    this.deconv2 = new UpsampleConvLayer(64, 32, 3, 1, 2);
    this.in5 = new nn.InstanceNorm2d(32, { affine: true });
    this.deconv3 = new ConvLayer(32, 3, 9, 1);
    // Non-linearities
    this.relu = new nn.ReLU();
  }

  forward(X) {
    let y = this.relu(this.in1(this.conv1(X)));
    y = this.relu(this.in2(this.conv2(y)));
    y = this.relu(this.in3(this.conv3(y)));
    y = this.res1(y);
    y = this.res2(y);
    y = this.res3(y);
    y = this.res4(y);
    y = this.res5(y);
    y = this.relu(this.in4(this.deconv1(y)));
    y = this.relu(this.in5(this.deconv2(y)));
    y = this.deconv3(y);
    return y;
  }
}

module.exports = { TransformerNet, ConvLayer, ResidualBlock, UpsampleConvLayer };
