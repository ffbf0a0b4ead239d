// padding.js - kd.nn padding modules over kd.nn.functional.pad: ConstantPad1d/2d/3d, ZeroPad2d,
// ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d. `padding` is a number (every side) or a list of
// 2 * nd numbers [left, right, top, bottom, front, back] (last dim first), as in PyTorch.
'use strict';

const { typeError } = require('../errors');

module.exports = function installPadding(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const pyTuple = (a) => `(${a.join(', ')})`;
  const sides = (v, n, what) => {
    const a = Array.isArray(v) ? v.slice() : Array(n).fill(v);
    if (a.length !== n || !a.every(Number.isInteger)) throw typeError(`${what}: padding must be an int or a list of ${n} ints, got ${JSON.stringify(v)}`);
    return a;
  };

  class PadNd extends Module {
    constructor(what, nd, mode, args, withValue) {
      super();
      const o = parseArgs(what, args, withValue ? ['padding', 'value'] : ['padding']);
      this.padding = sides(o.padding, 2 * nd, what);
      this.mode = mode;
      if (withValue) this.value = o.value;
    }
    forward(input) {
      return this.mode === 'constant' ? F.pad(input, this.padding, 'constant', this.value) : F.pad(input, this.padding, this.mode);
    }
    extraRepr() {
      return this.mode === 'constant' && !(this instanceof ZeroPad2d)
        ? `padding=${pyTuple(this.padding)}, value=${this.value}` : pyTuple(this.padding);
    }
  }
  const make = (name, nd, mode, withValue) => ({
    [name]: class extends PadNd { constructor(...args) { super(`${name}()`, nd, mode, args, withValue); } },
  })[name];

  /** Pads the last dim with a constant. ConstantPad1d(padding, value). */
  const ConstantPad1d = make('ConstantPad1d', 1, 'constant', true);
  /** Pads the last 2 dims with a constant. ConstantPad2d(padding, value). */
  const ConstantPad2d = make('ConstantPad2d', 2, 'constant', true);
  /** Pads the last 3 dims with a constant. ConstantPad3d(padding, value). */
  const ConstantPad3d = make('ConstantPad3d', 3, 'constant', true);
  /** Pads the last 2 dims with zeros. ZeroPad2d(padding). */
  class ZeroPad2d extends PadNd {
    constructor(...args) { super('ZeroPad2d()', 2, 'constant', args, false); this.value = 0.0; }
  }
  /** Pads the last dim with the reflection of the input. ReflectionPad1d(padding). */
  const ReflectionPad1d = make('ReflectionPad1d', 1, 'reflect', false);
  /** Pads the last 2 dims with the reflection of the input. ReflectionPad2d(padding). */
  const ReflectionPad2d = make('ReflectionPad2d', 2, 'reflect', false);
  /** Pads the last 3 dims with the reflection of the input. ReflectionPad3d(padding). */
  const ReflectionPad3d = make('ReflectionPad3d', 3, 'reflect', false);
  /** Pads the last dim by repeating its edge values. ReplicationPad1d(padding). */
  const ReplicationPad1d = make('ReplicationPad1d', 1, 'replicate', false);
  /** Pads the last 2 dims by repeating their edge values. ReplicationPad2d(padding). */
  const ReplicationPad2d = make('ReplicationPad2d', 2, 'replicate', false);
  /** Pads the last 3 dims by repeating their edge values. ReplicationPad3d(padding). */
  const ReplicationPad3d = make('ReplicationPad3d', 3, 'replicate', false);

  Object.assign(nn, {
    ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad2d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
    ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
  });
};
