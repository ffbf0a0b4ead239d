// weight_norm.js - kd.nn.utils.weightNorm / removeWeightNorm (torch.nn.utils.weight_norm): a
// parameter w reparametrised as g * v / ||v|| (Salimans and Kingma 2016). The module gets the
// parameters <name>G (the norms, state-dict key <name>_g) and <name>V (<name>_v) in place of
// <name>, which a forward pre-hook recomputes before every call as a plain tensor.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installWeightNorm(kd, nn, { Module, Parameter, stateOf, snake }) {
  const registry = new WeakMap(); // module -> Map(name -> {dim, handle})

  // ||v|| over every dim but dim (kept as size-1 dims); dim -1: the norm of the whole tensor
  function normExceptDim(v, dim) {
    if (dim === -1) return v.norm();
    const dims = [];
    for (let d = 0; d < v.ndim; d++) if (d !== dim) dims.push(d);
    return dims.length ? v.pow(2).sum(dims, true).sqrt() : v.abs();
  }
  const keyOf = (name, suffix) => `${name}${suffix}`;
  function computeWeight(module, name, dim) {
    const g = module[keyOf(name, 'G')];
    const v = module[keyOf(name, 'V')];
    return v.mul(g.div(normExceptDim(v, dim)));
  }

  /**
   * Reparametrises module[name] (default 'weight') as g * v / ||v||, the norm over every dim but
   * dim (default 0: one norm per output; null: the whole tensor). Returns the module.
   */
  function weightNorm(module, name = 'weight', dim = 0) {
    if (!(module instanceof Module)) throw typeError('weightNorm(module): module must be a kd.nn.Module');
    if (isPlainObject(name)) ({ name = 'weight', dim = 0 } = name);
    const found = registry.get(module);
    if (found && found.has(name)) {
      throw new KindlingError(`Cannot register two weight_norm hooks on the same parameter ${snake(name)}`, 'KD_INVALID_ARGUMENT');
    }
    const s = stateOf(module);
    const prop = s.params.has(name) ? name : [...s.params].find((n) => snake(n) === name);
    const weight = prop === undefined ? undefined : module[prop];
    if (weight === undefined || weight === null) throw new KindlingError(`'${module.constructor.name}' object has no parameter '${name}'`, 'KD_INVALID_ARGUMENT');
    if (dim === null || dim === undefined) dim = -1;
    else if (dim < -1) dim += weight.ndim;
    kd.noGrad(() => {
      const g = new Parameter(normExceptDim(weight, dim));
      const v = new Parameter(weight.detach());
      delete module[prop];
      module[keyOf(prop, 'G')] = g;
      module[keyOf(prop, 'V')] = v;
      module[prop] = computeWeight(module, prop, dim).detach();
    });
    const handle = module.registerForwardPreHook((m) => { m[prop] = computeWeight(m, prop, dim); });
    if (!found) registry.set(module, new Map());
    registry.get(module).set(name, { prop, dim, handle });
    return module;
  }

  /** Undoes weightNorm: module[name] becomes a Parameter holding g * v / ||v|| again. Returns the module. */
  function removeWeightNorm(module, name = 'weight') {
    const found = registry.get(module);
    const entry = found && found.get(name);
    if (!entry) throw new KindlingError(`weight_norm of '${name}' not found in ${module}`, 'KD_INVALID_ARGUMENT');
    const { prop, dim, handle } = entry;
    const w = kd.noGrad(() => computeWeight(module, prop, dim));
    handle.remove();
    delete module[prop];
    delete module[keyOf(prop, 'G')];
    delete module[keyOf(prop, 'V')];
    module[prop] = new Parameter(w);
    found.delete(name);
    return module;
  }

  function isPlainObject(v) { return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype; }

  Object.assign(nn.utils, { weightNorm, removeWeightNorm });
};
