// spectral_norm.js - kd.nn.utils.spectralNorm / removeSpectralNorm (torch.nn.utils.spectral_norm):
// a weight divided by its largest singular value sigma (Miyato et al. 2018), estimated by power
// iteration. The module gets the parameter <name>Orig (state-dict key <name>_orig) and the buffers
// <name>U, <name>V (the singular vectors' estimates) in place of <name>; a forward pre-hook
// recomputes <name> = <name>Orig / sigma before every call, running nPowerIterations steps of
// the power iteration (in place on the buffers, outside autograd) in training mode only.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installSpectralNorm(kd, nn, { Module, Parameter, stateOf, snake }) {
  const registry = new WeakMap(); // module -> Map(name -> entry)

  // x / max(||x||, eps)
  const normalize = (x, eps) => x.div(x.norm().clamp({ min: eps }));

  function toMatrix(weight, dim) {
    let w = weight;
    if (dim !== 0) {
      const rest = [];
      for (let d = 0; d < w.ndim; d++) if (d !== dim) rest.push(d);
      w = w.permute([dim, ...rest]);
    }
    return w.reshape(w.shape[0], -1);
  }

  function computeWeight(module, e, powerIteration) {
    const weight = module[`${e.prop}Orig`];
    let u = module[`${e.prop}U`];
    let v = module[`${e.prop}V`];
    const mat = toMatrix(weight, e.dim);
    if (powerIteration) {
      kd.noGrad(() => kd.tidy(() => {
        for (let i = 0; i < e.nPowerIterations; i++) {
          v.copy_(normalize(kd.mv(mat.detach().t(), u), e.eps));
          u.copy_(normalize(kd.mv(mat.detach(), v), e.eps));
        }
      }));
      u = u.clone();
      v = v.clone();
    }
    const sigma = kd.dot(u, kd.mv(mat, v));
    return weight.div(sigma);
  }

  /**
   * Divides module[name] (default 'weight') by its spectral norm, estimated by nPowerIterations
   * (default 1) of the power iteration per training call. dim: the output dim (default 0, 1 for
   * ConvTranspose layers). Options: {name, nPowerIterations, eps, dim}. Returns the module.
   */
  function spectralNorm(module, name = 'weight', nPowerIterations = 1, eps = 1e-12, dim = null) {
    if (!(module instanceof Module)) throw typeError('spectralNorm(module): module must be a kd.nn.Module');
    if (name !== null && typeof name === 'object') {
      ({ name = 'weight', nPowerIterations = 1, eps = 1e-12, dim = null } = name);
    }
    if (!(nPowerIterations > 0)) {
      throw new KindlingError(`Expected n_power_iterations to be positive, but got n_power_iterations=${nPowerIterations}`, 'KD_INVALID_ARGUMENT');
    }
    const found = registry.get(module);
    if (found && found.has(name)) {
      throw new KindlingError(`Cannot register two spectral_norm hooks on the same parameter ${snake(name)}`, 'KD_INVALID_ARGUMENT');
    }
    if (dim === null || dim === undefined) dim = /^ConvTranspose/.test(module.constructor.name) ? 1 : 0;
    const s = stateOf(module);
    const prop = s.params.has(name) ? name : [...s.params].find((n) => snake(n) === name);
    const weight = prop === undefined ? undefined : module[prop];
    if (weight === undefined || weight === null) {
      throw new KindlingError(`\`SpectralNorm\` cannot be applied as parameter \`${name}\` is None`, 'KD_INVALID_ARGUMENT');
    }
    const e = { prop, dim, eps, nPowerIterations, handle: null };
    kd.noGrad(() => {
      const [h, w] = toMatrix(weight, dim).shape;
      const opts = { dtype: weight.dtype, device: weight.device };
      const u = kd.tidy(() => normalize(kd.randn([h], opts), eps));
      const v = kd.tidy(() => normalize(kd.randn([w], opts), eps));
      delete module[prop];
      module[`${prop}Orig`] = weight;
      module[prop] = weight.detach();
      module.registerBuffer(`${prop}U`, u);
      module.registerBuffer(`${prop}V`, v);
    });
    e.handle = module.registerForwardPreHook((m) => { m[prop] = computeWeight(m, e, m.training); });
    if (!found) registry.set(module, new Map());
    registry.get(module).set(name, e);
    return module;
  }

  /** Undoes spectralNorm: module[name] becomes a Parameter holding the normalised weight. Returns the module. */
  function removeSpectralNorm(module, name = 'weight') {
    const found = registry.get(module);
    const e = found && found.get(name);
    if (!e) throw new KindlingError(`spectral_norm of '${name}' not found in ${module}`, 'KD_INVALID_ARGUMENT');
    const w = kd.noGrad(() => computeWeight(module, e, false));
    e.handle.remove();
    for (const k of [e.prop, `${e.prop}U`, `${e.prop}V`, `${e.prop}Orig`]) delete module[k];
    module.registerParameter(e.prop, new Parameter(w));
    found.delete(name);
    return module;
  }

  Object.assign(nn.utils, { spectralNorm, removeSpectralNorm });
};
