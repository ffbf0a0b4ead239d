// nn/module_copy.js - kd.nn._copyModule(m): a deep copy of a module, as Python's
// copy.deepcopy(model) makes (used by kd.optim.swaUtils.AveragedModel). The copy has the same
// class and attributes; its parameters and buffers are new tensors with the same values
// (gradients copied too), registered the same way (persistent or not), submodules copied
// recursively; a module or tensor reached twice (tied weights) is copied once. Hooks and other
// values (numbers, strings, functions) are shared, arrays and plain objects copied.
'use strict';

module.exports = (kd, nn, base) => {
  const { Module, ParameterClass, ownedParameter, stateOf, isPlainObject } = base;
  const { Tensor } = kd;

  function copyModule(m, memo = new Map()) {
    if (!(m instanceof Module)) throw new kd.KindlingTypeError('copyModule(m): m must be a kd.nn.Module', 'KD_INVALID_TYPE');
    const copyValue = (v) => {
      if (v === null || typeof v !== 'object' && typeof v !== 'function') return v;
      if (memo.has(v)) return memo.get(v);
      if (v instanceof Module) return copyModule(v, memo);
      if (v instanceof ParameterClass) {
        const p = kd.noGrad(() => ownedParameter(v.detach().clone(), v.requiresGrad));
        if (v.grad !== null) p.grad = kd.noGrad(() => v.grad.clone());
        memo.set(v, p);
        return p;
      }
      if (v instanceof Tensor) {
        const t = kd.keep(kd.noGrad(() => v.clone()));
        memo.set(v, t);
        return t;
      }
      if (Array.isArray(v)) return v.map(copyValue);
      if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyValue(x)]));
      return v;
    };
    const c = Reflect.construct(Module, [], m.constructor);
    memo.set(m, c);
    const s = stateOf(m);
    const cs = stateOf(c);
    for (const k of s.buffers) cs.buffers.add(k);
    for (const k of s.nonPersistent) cs.nonPersistent.add(k);
    for (const [id, h] of s.preHooks) cs.preHooks.set(id, h);
    for (const [id, h] of s.hooks) cs.hooks.set(id, h);
    cs.nextHook = s.nextHook;
    for (const key of Reflect.ownKeys(m)) {
      if (typeof key !== 'string') continue;
      const d = Reflect.getOwnPropertyDescriptor(m, key);
      if ('value' in d) d.value = copyValue(d.value);
      if (s.params.has(key)) cs.params.add(key);
      if (s.modules.has(key)) cs.modules.add(key);
      Reflect.defineProperty(c, key, d);
    }
    return c;
  }
  Object.defineProperty(nn, '_copyModule', { value: copyModule, enumerable: false });
};
