// stateless.js - kd.nn.utils.stateless.functionalCall (torch.nn.utils.stateless.functional_call):
// calls a module with some of its parameters and buffers replaced by the given tensors (any
// Tensor, e.g. one that requires grad for meta-learning), restoring the module's own afterwards;
// and kd.nn.utils.skipInit (torch.nn.utils.skip_init): a module built without its initialisers.
'use strict';

const { typeError } = require('../errors');

module.exports = function installStateless(kd, nn, { Module, stateOf, snake, isPlainObject }) {
  // The module and property name behind a dotted state-dict name ('0.weight', 'bn.running_mean').
  function locate(module, name) {
    const parts = name.split('.');
    const attr = parts.pop();
    const owner = module.getSubmodule(parts.join('.'));
    const s = stateOf(owner);
    const known = [...s.params, ...s.buffers].find((n) => n === attr || snake(n) === attr);
    return [owner, known !== undefined ? known : attr];
  }

  /**
   * module(...args) with the named tensors of parametersAndBuffers ({'fc.weight': t, ...}, a Map
   * too) in place of the module's own during the call. args: an array of arguments or a single
   * argument; kwargs (an options object) is passed last when given.
   */
  function functionalCall(module, parametersAndBuffers, args, kwargs) {
    if (!(module instanceof Module)) throw typeError('functionalCall(module, ...): module must be a kd.nn.Module');
    const entries = parametersAndBuffers instanceof Map ? [...parametersAndBuffers]
      : isPlainObject(parametersAndBuffers) ? Object.entries(parametersAndBuffers) : null;
    if (entries === null) throw typeError('functionalCall(): parametersAndBuffers must be an object or a Map of name -> Tensor');
    const saved = [];
    try {
      for (const [name, t] of entries) {
        const [owner, key] = locate(module, name);
        const s = stateOf(owner);
        saved.push([owner, key, Object.prototype.hasOwnProperty.call(owner, key), owner[key]]);
        s.swapping++;
        try { owner[key] = t; } finally { s.swapping--; }
      }
      const list = Array.isArray(args) ? args : [args];
      return kwargs === undefined || kwargs === null ? module(...list) : module(...list, kwargs);
    } finally {
      for (let i = saved.length - 1; i >= 0; i--) {
        const [owner, key, had, value] = saved[i];
        const s = stateOf(owner);
        s.swapping++;
        try {
          if (had) owner[key] = value; else delete owner[key];
        } finally { s.swapping--; }
      }
    }
  }

  /**
   * new ModuleClass(...args) without running the initialisers of kd.nn.init (the parameters hold
   * uninitialised memory), for a module whose weights are about to be loaded or set.
   */
  function skipInit(ModuleClass, ...args) {
    if (typeof ModuleClass !== 'function' || !(ModuleClass.prototype instanceof Module)) {
      throw typeError('skipInit(moduleClass, ...args): moduleClass must be a kd.nn.Module subclass');
    }
    return nn.init._withoutInit(() => new ModuleClass(...args));
  }

  nn.utils.stateless = { functionalCall };
  nn.utils.skipInit = skipInit;
};
