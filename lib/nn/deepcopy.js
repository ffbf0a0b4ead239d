// deepcopy.js - a deep copy of a module, as Python's copy.deepcopy makes one (what PyTorch's
// TransformerEncoder/TransformerDecoder do to the layer they are given, N times, what
// swa_utils.AveragedModel and fuse_conv_bn_eval do to a model; base.deepCopy, kd.nn._copyModule): a module of the
// same class whose parameters and buffers are copies of the original's values (same dtype,
// device, requiresGrad; a persistent buffer stays persistent), whose submodules are deep copies
// (a submodule shared twice is copied once and shared in the copy too), and whose other
// enumerable own properties are copied (tensors cloned, arrays and plain objects copied, functions and other
// values shared). The hooks are carried over, and so are the parameters' gradients (copied, as
// Tensor.__deepcopy__ copies .grad).
'use strict';

module.exports = function makeDeepCopy(kd, { Module, ParameterClass, ownedParameter, isPlainObject, stateOf }) {
  function copyValue(v, memo) {
    if (v instanceof Module) return deepCopy(v, memo);
    if (v instanceof ParameterClass) return copyParameter(v, memo);
    if (v instanceof kd.Tensor) {
      if (!memo.has(v)) memo.set(v, kd.tidy(() => kd.keep(v.detach().clone())));
      return memo.get(v);
    }
    if (Array.isArray(v)) return v.map((x) => copyValue(x, memo));
    if (isPlainObject(v)) {
      const o = {};
      for (const [k, x] of Object.entries(v)) o[k] = copyValue(x, memo);
      return o;
    }
    return v;
  }

  function copyParameter(p, memo) {
    // (parameters are not tracked by kd.tidy: the scope frees only the detached view)
    if (!memo.has(p)) {
      const c = kd.tidy(() => kd.noGrad(() => ownedParameter(p.detach().clone(), p.requiresGrad)));
      if (p.grad !== null && p.grad !== undefined) c.grad = kd.tidy(() => kd.keep(kd.noGrad(() => p.grad.clone())));
      memo.set(p, c);
    }
    return memo.get(p);
  }

  /** A deep copy of module m (memo: originals -> copies already made, for shared members). */
  function deepCopy(m, memo = new Map()) {
    if (memo.has(m)) return memo.get(m);
    const s = stateOf(m);
    const c = new Module();
    Object.setPrototypeOf(c, Object.getPrototypeOf(m));
    memo.set(m, c);
    const registered = new Set([...s.params, ...s.buffers, ...s.modules]);
    for (const key of Object.keys(m)) if (!registered.has(key)) c[key] = copyValue(m[key], memo);
    for (const key of s.params) c.registerParameter(key, m[key] === null ? null : copyParameter(m[key], memo));
    for (const key of s.buffers) c.registerBuffer(key, m[key] === null ? null : copyValue(m[key], memo), { persistent: !s.nonPersistent.has(key) });
    for (const key of s.modules) c.registerModule(key, m[key] === null ? null : deepCopy(m[key], memo));
    c.training = m.training;
    const cs = stateOf(c);
    for (const [id, h] of s.preHooks) cs.preHooks.set(id, h);
    for (const [id, h] of s.hooks) cs.hooks.set(id, h);
    cs.nextHook = s.nextHook;
    return c;
  }

  return deepCopy;
};
