// layers.js - the building blocks torchvision's classification models share, written with kd.nn
// so that their state-dict names are torchvision's (torchvision/ops/misc.py, models/_utils.py):
//   Activation           a parameterless module over one kd.nn.functional op (relu6, hardswish,
//                        hardsigmoid, ...), standing for nn.ReLU6 / nn.Hardswish / nn.Hardsigmoid
//   Chain                nn.Sequential whose forward frees each intermediate result as soon as the
//                        next module has consumed it (inference holds one activation at a time)
//   ConvNormActivation   Conv2d(bias=False) -> BatchNorm2d -> activation: keys 0.weight, 1.*
//   SqueezeExcitation    avgpool -> fc1 -> activation -> fc2 -> scale_activation, times the input
//   makeDivisible        torchvision's _make_divisible (channel rounding of width multipliers)
//   disposeAfter         runs f(x), then frees x unless f returned it
'use strict';

module.exports = function makeLayers(kd) {
  const { nn } = kd;
  const F = nn.functional;

  /** A module with no state that applies kd.nn.functional[name] (no in-place: x is kept). */
  class Activation extends nn.Module {
    constructor(name) {
      super();
      if (typeof F[name] !== 'function') throw new TypeError(`Activation: kd.nn.functional.${name} is not a function`);
      this.fn = name;
    }
    forward(x) { return F[this.fn](x); }
    extraRepr() { return this.fn; }
  }

  /** Frees x after f(x) unless f handed x itself back (Identity, Dropout in eval mode). */
  function disposeAfter(x, f) {
    const y = f(x);
    if (y !== x) x.dispose();
    return y;
  }

  /** Runs modules in order; the caller's input is kept, every intermediate result is freed. */
  function runChain(modules, input) {
    let x = input;
    for (const m of modules) {
      const y = m(x);
      if (x !== input && y !== x) x.dispose();
      x = y;
    }
    return x;
  }

  class Chain extends nn.Sequential {
    forward(input) { return runChain(this, input); }
  }

  /**
   * torchvision.ops.Conv2dNormActivation: padding (k - 1) / 2 * dilation, no conv bias, then
   * BatchNorm2d(eps, momentum) and the activation (a module, or null for none).
   */
  function convNormActivation(inC, outC, { kernelSize = 3, stride = 1, groups = 1, dilation = 1, activation = null, eps = 1e-5, momentum = 0.1 } = {}) {
    const layers = [
      new nn.Conv2d(inC, outC, kernelSize, { stride, padding: Math.floor((kernelSize - 1) / 2) * dilation, dilation, groups, bias: false }),
      new nn.BatchNorm2d(outC, { eps, momentum }),
    ];
    if (activation) layers.push(activation);
    return new Chain(...layers);
  }

  /** torchvision.ops.SqueezeExcitation: x * scale(fc2(act(fc1(avgpool(x))))). */
  class SqueezeExcitation extends nn.Module {
    constructor(inputChannels, squeezeChannels, { activation = () => new nn.ReLU(), scaleActivation = () => new Activation('sigmoid') } = {}) {
      super();
      this.avgpool = new nn.AdaptiveAvgPool2d(1);
      this.fc1 = new nn.Conv2d(inputChannels, squeezeChannels, 1);
      this.fc2 = new nn.Conv2d(squeezeChannels, inputChannels, 1);
      this.activation = activation();
      this.scaleActivation = scaleActivation();
    }
    forward(x) {
      const scale = runChain([this.avgpool, this.fc1, this.activation, this.fc2, this.scaleActivation], x);
      return disposeAfter(scale, (s) => x.mul(s));
    }
  }

  /** torchvision's _make_divisible: v rounded to a multiple of divisor, at least minValue, not below 0.9 v. */
  function makeDivisible(v, divisor = 8, minValue = divisor) {
    let n = Math.max(minValue, Math.floor(Math.trunc(v + divisor / 2) / divisor) * divisor);
    if (n < 0.9 * v) n += divisor;
    return n;
  }

  return { Activation, Chain, convNormActivation, SqueezeExcitation, makeDivisible, runChain, disposeAfter };
};
