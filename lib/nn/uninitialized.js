// uninitialized.js - kd.nn.UninitializedParameter and kd.nn.UninitializedBuffer (PyTorch's
// torch.nn.parameter UninitializedTensorMixin): a parameter or buffer whose size is not known yet,
// as lazy modules hold before their first forward, and kd.nn.parameter.isLazy.
//
// Note [Uninitialized tensors]: such a tensor keeps a 0-element handle for its dtype, device and
// requiresGrad only. Every other use reaches its handle (`_h`, an accessor on the instance that
// throws PyTorch's error), so an op, a read or a shape query fails with a clear message instead
// of running on the placeholder. materialize(shape, {device, dtype}) gives it uninitialised
// storage of that shape (torch.empty) and turns the same object into a kd.nn.Parameter
// (UninitializedParameter) or a plain Tensor (UninitializedBuffer), as PyTorch's cls_to_become.
'use strict';

const { KindlingError, typeError } = require('../errors');
const tidyState = require('../tidy').state;

module.exports = function installUninitialized(kd, nn, { ParameterClass, parseArgs }) {
  const { Tensor } = kd;
  const HANDLE = Symbol('kd.nn uninitialized handle');
  const getter = (name) => Object.getOwnPropertyDescriptor(Tensor.prototype, name).get;
  const readDtype = getter('dtype');
  const readDevice = getter('device');
  const readRequiresGrad = getter('requiresGrad');
  const writeRequiresGrad = Object.getOwnPropertyDescriptor(Tensor.prototype, 'requiresGrad').set;
  // the handle: the hidden placeholder once hidden, the tensor's own before (in the constructor)
  const handleOf = (t) => (Object.prototype.hasOwnProperty.call(t, HANDLE) ? t[HANDLE] : t._h);

  function useError(t) {
    const cls = t.constructor.name;
    return new KindlingError(`Attempted to use an uninitialized parameter. This error happens when you are using a \`LazyModule\` or explicitly manipulating \`kd.nn.${cls}\` objects. When using LazyModules Call \`forward\` with a dummy batch to initialize the parameters before calling kd functions`,
      'KD_INVALID_ARGUMENT');
  }

  // hides the placeholder handle behind the throwing accessor (See Note [Uninitialized tensors])
  function hide(t) {
    Object.defineProperty(t, HANDLE, { value: t._h, writable: true, configurable: true });
    Object.defineProperty(t, '_h', { configurable: true, enumerable: false, get() { throw useError(this); } });
  }
  function placeholder(what, args, requiresGradDefault) {
    const o = parseArgs(`${what}()`, args, ['requiresGrad', 'device', 'dtype'], { requiresGrad: requiresGradDefault, device: null, dtype: null });
    if (typeof o.requiresGrad !== 'boolean') throw typeError(`${what}(): requiresGrad must be a boolean`);
    const saved = tidyState.active;
    tidyState.active = 0; // owned by its module, as a Parameter
    try {
      return { o, t: kd.empty([0], { dtype: o.dtype || undefined, device: o.device || undefined }) };
    } finally {
      tidyState.active = saved;
    }
  }

  // what both classes share: metadata reads, the errors, materialize
  const mixin = {
    get dtype() { return readDtype.call({ _h: handleOf(this) }); },
    get device() { return readDevice.call({ _h: handleOf(this) }); },
    get requiresGrad() { return readRequiresGrad.call({ _h: handleOf(this) }); },
    set requiresGrad(v) { writeRequiresGrad.call({ _h: handleOf(this) }, v); },
    get shape() {
      throw new KindlingError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in `loadStateDict` when trying to load an uninitialized parameter into an initialized one. Call `forward` to initialize the parameters before accessing their attributes.",
        'KD_INVALID_ARGUMENT');
    },
    shareMemory_() {
      throw new KindlingError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the parameters before calling `module.shareMemory()`.", 'KD_INVALID_ARGUMENT');
    },
    toString() { return `<${this.constructor.name}>`; },
    [Symbol.for('nodejs.util.inspect.custom')]() { return `<${this.constructor.name}>`; },
  };
  function materialize(self, Become, args) {
    const o = parseArgs('materialize()', args, ['shape', 'device', 'dtype'], { device: null, dtype: null });
    const shape = typeof o.shape === 'number' ? [o.shape] : o.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw typeError(`materialize(): shape must be a list of non-negative integers, got ${JSON.stringify(o.shape)}`);
    }
    const requiresGrad = self.requiresGrad;
    const saved = tidyState.active;
    tidyState.active = 0;
    let t;
    try {
      t = kd.empty(shape, { dtype: o.dtype || self.dtype, device: o.device || self.device });
    } finally {
      tidyState.active = saved;
    }
    delete self._h;
    delete self[HANDLE];
    self._h = t._h;
    Object.setPrototypeOf(self, Become.prototype);
    if (requiresGrad) self.requiresGrad = true;
    return self;
  }

  /**
   * A parameter of unknown size (a lazy module's, before its first forward).
   * UninitializedParameter(requiresGrad=true, {device, dtype}); materialize(shape, {device, dtype})
   * makes it a kd.nn.Parameter of that shape (uninitialised values). Any other use throws.
   */
  class UninitializedParameter extends ParameterClass {
    constructor(...args) {
      const { o, t } = placeholder('UninitializedParameter', args, true);
      super(t, o.requiresGrad);
      t.dispose();
      hide(this);
    }
    materialize(...args) { return materialize(this, ParameterClass, args); }
  }
  /**
   * A buffer of unknown size. UninitializedBuffer(requiresGrad=false, {device, dtype});
   * materialize(shape, {device, dtype}) makes it a kd.Tensor of that shape.
   */
  class UninitializedBuffer extends Tensor {
    constructor(...args) {
      const { o, t } = placeholder('UninitializedBuffer', args, false);
      const saved = tidyState.active;
      tidyState.active = 0;
      try {
        super(t._h);
      } finally {
        tidyState.active = saved;
      }
      if (o.requiresGrad) this.requiresGrad = true;
      hide(this);
    }
    materialize(...args) { return materialize(this, Tensor, args); }
  }
  for (const C of [UninitializedParameter, UninitializedBuffer]) {
    Object.defineProperties(C.prototype, Object.getOwnPropertyDescriptors(mixin));
  }

  /** True for a parameter or buffer not materialized yet (torch.nn.parameter.is_lazy). */
  function isLazy(t) { return t instanceof UninitializedParameter || t instanceof UninitializedBuffer; }

  Object.assign(nn, { UninitializedParameter, UninitializedBuffer });
  nn.parameter = Object.assign(nn.parameter || {}, { Parameter: nn.Parameter, UninitializedParameter, UninitializedBuffer, isLazy });
};
