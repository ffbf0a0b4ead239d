// parametrizations.js - kd.nn.utils.parametrizations (torch.nn.utils.parametrizations, 1.13):
// spectralNorm(module, name) and orthogonal(module, name), each a parametrization registered
// with kd.nn.utils.parametrize (state-dict keys 'parametrizations.weight.original', ...).
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installParametrizations(kd, nn, { Module }) {
  const { registerParametrization } = nn.utils.parametrize;
  const normalize = (x, eps) => x.div(x.norm().clamp({ min: eps }));

  // ---- spectral norm -------------------------------------------------------------------------
  /** weight / sigma(weight), sigma by power iteration (u, v buffers; 15 steps at creation). */
  class SpectralNorm extends Module {
    constructor(weight, nPowerIterations = 1, dim = 0, eps = 1e-12) {
      super();
      const ndim = weight.ndim;
      if (dim >= ndim || dim < -ndim) {
        throw new KindlingError(`Dimension out of range (expected to be in range of [-${ndim}, ${ndim - 1}] but got ${dim})`, 'KD_INVALID_ARGUMENT');
      }
      if (!(nPowerIterations > 0)) {
        throw new KindlingError(`Expected n_power_iterations to be positive, but got n_power_iterations=${nPowerIterations}`, 'KD_INVALID_ARGUMENT');
      }
      this.dim = dim >= 0 ? dim : dim + ndim;
      this.eps = eps;
      if (ndim > 1) {
        this.nPowerIterations = nPowerIterations;
        const mat = this._matrix(weight);
        const [h, w] = mat.shape;
        const opts = { dtype: mat.dtype, device: mat.device };
        this.registerBuffer('_u', kd.tidy(() => normalize(kd.randn([h], opts), eps)));
        this.registerBuffer('_v', kd.tidy(() => normalize(kd.randn([w], opts), eps)));
        this._powerMethod(mat, 15);
      }
    }
    _matrix(weight) {
      let w = weight;
      if (this.dim !== 0) {
        const rest = [];
        for (let d = 0; d < w.ndim; d++) if (d !== this.dim) rest.push(d);
        w = w.permute([this.dim, ...rest]);
      }
      return w.flatten(1);
    }
    _powerMethod(mat, n) {
      kd.noGrad(() => kd.tidy(() => {
        for (let i = 0; i < n; i++) {
          this._u.copy_(normalize(kd.mv(mat, this._v), this.eps));
          this._v.copy_(normalize(kd.mv(mat.t(), this._u), this.eps));
        }
      }));
    }
    forward(weight) {
      if (weight.ndim === 1) return normalize(weight, this.eps);
      const mat = this._matrix(weight);
      if (this.training) this._powerMethod(mat, this.nPowerIterations);
      const u = this._u.clone();
      const v = this._v.clone();
      const sigma = kd.vdot(u, kd.mv(mat, v));
      return weight.div(sigma);
    }
    rightInverse(value) { return value; }
  }

  function spectralNorm(module, name = 'weight', nPowerIterations = 1, eps = 1e-12, dim = null) {
    if (name !== null && typeof name === 'object') ({ name = 'weight', nPowerIterations = 1, eps = 1e-12, dim = null } = name);
    const weight = module[name];
    if (!(weight instanceof kd.Tensor)) {
      throw new KindlingError(`Module '${module.constructor.name}' has no parameter or buffer with name '${name}'`, 'KD_INVALID_ARGUMENT');
    }
    if (dim === null || dim === undefined) dim = /^(Parametrized)?ConvTranspose[123]d$/.test(module.constructor.name) ? 1 : 0;
    registerParametrization(module, name, new SpectralNorm(weight, nPowerIterations, dim, eps));
    return module;
  }

  // ---- orthogonal ----------------------------------------------------------------------------
  // exp(A) by scaling and squaring with a degree-18 Taylor polynomial (differentiable: kindling ops)
  function matrixExp(A) {
    const n = A.shape[A.ndim - 1];
    const norm = A.abs().sum(-2).amax(-1).max().item(); // the 1-norm (largest over a batch)
    const s = norm > 0.5 ? Math.ceil(Math.log2(norm / 0.5)) : 0;
    const X = s > 0 ? A.div(2 ** s) : A;
    const I = kd.eye(n, { dtype: A.dtype, device: A.device });
    let term = I.expand(A.shape);
    let sum = term;
    for (let k = 1; k <= 18; k++) {
      term = term.matmul(X).div(k);
      sum = sum.add(term);
    }
    for (let i = 0; i < s; i++) sum = sum.matmul(sum);
    return sum;
  }
  // LAPACK's householder_product: H_1 ... H_k applied to the first k columns of the identity,
  // H_i = I - tau_i v_i v_i^T, v_i = column i of A below the diagonal with a 1 on it.
  function householderProduct(A, tau) {
    const [n, k] = A.shape.slice(-2);
    const batch = A.shape.slice(0, -2);
    const eye = kd.eye(n, { dtype: A.dtype, device: A.device });
    let Q = eye.expand([...batch, n, n]);
    const V = A.tril(-1).add(kd.eye(n, k, { dtype: A.dtype, device: A.device }));
    for (let i = 0; i < k; i++) {
      const v = V.narrow(-1, i, 1); // (..., n, 1)
      const t = tau.narrow(-1, i, 1).unsqueeze(-1); // (..., 1, 1)
      // Q <- Q (I - t v v^T) = Q - t (Q v) v^T
      Q = Q.sub(Q.matmul(v).mul(t).matmul(v.mT));
    }
    return Q.narrow(-1, 0, k);
  }
  // LAPACK's geqrf: [A, tau], R on and above A's diagonal, the Householder vectors below it (their
  // leading 1 implicit) and their scalars tau, of each matrix of a (batch of) n x k, n >= k. On
  // the host, in float64: it runs once per assignment, outside autograd.
  function geqrf(Q) {
    const shape = Q.shape;
    const [n, k] = shape.slice(-2);
    const count = Q.numel() / (n * k);
    const a = Float64Array.from(Q.contiguous().dataSync());
    const taus = new Float64Array(count * k);
    for (let b = 0; b < count; b++) {
      const off = b * n * k;
      const at = (i, j) => off + i * k + j;
      for (let j = 0; j < k; j++) {
        const alpha = a[at(j, j)];
        let xnorm = 0;
        for (let i = j + 1; i < n; i++) xnorm = Math.hypot(xnorm, a[at(i, j)]);
        if (xnorm === 0) { taus[b * k + j] = 0; continue; }
        const beta = -(alpha >= 0 ? 1 : -1) * Math.hypot(alpha, xnorm);
        const tau = (beta - alpha) / beta;
        const scale = 1 / (alpha - beta);
        for (let i = j + 1; i < n; i++) a[at(i, j)] *= scale;
        a[at(j, j)] = beta;
        taus[b * k + j] = tau;
        // apply H = I - tau v v^T (v = [1, a[j+1:, j]]) to the columns right of j
        for (let c = j + 1; c < k; c++) {
          let dot = a[at(j, c)];
          for (let i = j + 1; i < n; i++) dot += a[at(i, j)] * a[at(i, c)];
          dot *= tau;
          a[at(j, c)] -= dot;
          for (let i = j + 1; i < n; i++) a[at(i, c)] -= dot * a[at(i, j)];
        }
      }
    }
    const opts = { dtype: Q.dtype, device: Q.device };
    return [kd.tensor(a, opts).reshape(shape), kd.tensor(taus, opts).reshape([...shape.slice(0, -2), k])];
  }
  const isOrthogonal = (Q, eps = null) => {
    const n = Q.shape[Q.ndim - 1];
    const tol = eps === null ? 10 * (Q.dtype === 'float64' ? 2.22e-16 : 1.19e-7) : eps;
    const Id = kd.eye(n, { dtype: Q.dtype, device: Q.device });
    return Q.mT.matmul(Q).sub(Id).abs().max().item() <= tol * n * 10 || kd.allclose(Q.mT.matmul(Q), Id.expand(Q.mT.matmul(Q).shape), { atol: tol });
  };
  // the Q of Q's QR decomposition, signs so that R has a positive diagonal
  function makeOrthogonal(A) {
    const [X, R] = kd.linalg.qr(A);
    return X.mul(kd.diagonal(R, 0, -2, -1).sgn().unsqueeze(-2));
  }

  class Orthogonal extends Module {
    constructor(weight, map, useTrivialization = true) {
      super();
      this.shape = weight.shape;
      this.orthogonalMap = map;
      if (useTrivialization) this.registerBuffer('base', null);
    }
    forward(X) {
      let n = X.shape[X.ndim - 2];
      let k = X.shape[X.ndim - 1];
      const transposed = n < k;
      if (transposed) { X = X.mT; [n, k] = [k, n]; }
      let Q;
      if (this.orthogonalMap === 'matrix_exp' || this.orthogonalMap === 'cayley') {
        X = X.tril();
        if (n !== k) X = kd.cat([X, kd.zeros([...X.shape.slice(0, -2), n, n - k], { dtype: X.dtype, device: X.device })], -1);
        const A = X.sub(X.mT);
        if (this.orthogonalMap === 'matrix_exp') Q = matrixExp(A);
        else {
          const Id = kd.eye(n, { dtype: A.dtype, device: A.device });
          Q = kd.linalg.solve(Id.sub(A.mul(0.5)), Id.add(A.mul(0.5)));
        }
        if (n !== k) Q = Q.narrow(-1, 0, k);
      } else {
        const A = X.tril(-1);
        const tau = A.mul(A).sum(-2).add(1).reciprocal().mul(2);
        Q = householderProduct(A, tau);
        Q = Q.mul(kd.diagonal(X, 0, -2, -1).detach().to({ dtype: 'int32' }).unsqueeze(-2));
      }
      if (this.base !== null && this.base !== undefined) Q = this.base.matmul(Q);
      if (transposed) Q = Q.mT;
      return Q;
    }
    rightInverse(Q) {
      return kd.noGrad(() => {
        if (Q.shape.join() !== this.shape.join()) {
          throw new KindlingError(`Expected a matrix or batch of matrices of shape [${this.shape}]. Got a tensor of shape [${Q.shape}].`, 'KD_SHAPE_MISMATCH');
        }
        const Qinit = Q;
        let n = Q.shape[Q.ndim - 2];
        let k = Q.shape[Q.ndim - 1];
        const transpose = n < k;
        if (transpose) { Q = Q.mT; [n, k] = [k, n]; }
        if (!Object.prototype.hasOwnProperty.call(this, 'base')) {
          if (this.orthogonalMap === 'cayley' || this.orthogonalMap === 'matrix_exp') {
            throw new KindlingError('It is not possible to assign to the matrix exponential or the Cayley parametrizations when use_trivialization=False.',
              'KD_NOT_SUPPORTED');
          }
          // the Householder vectors of Q (geqrf) with the signs of R's diagonal on the diagonal
          const [A, tau] = geqrf(Q);
          const d = kd.diagonal(A, 0, -2, -1);
          d.copy_(d.sign().mul(tau.eq(0).to({ dtype: A.dtype }).mul(-2).add(1)));
          return transpose ? A.mT.contiguous() : A;
        }
        if (n === k) Q = isOrthogonal(Q) ? Q.clone() : makeOrthogonal(Q);
        else Q = makeOrthogonal(kd.cat([Q, kd.randn([...Q.shape.slice(0, -2), n, n - k], { dtype: Q.dtype, device: Q.device })], -1));
        this.base = Q;
        const negId = kd.zerosLike(Qinit);
        kd.diagonal(negId, 0, -2, -1).fill_(-1);
        return negId;
      });
    }
  }

  /**
   * Makes module[name] (a matrix or batch of matrices) orthogonal (or semi-orthogonal): the
   * parametrization orthogonalMap ('matrix_exp' (default for square), 'cayley' or 'householder'
   * (default otherwise)) of an unconstrained original; useTrivialization (default true) keeps a
   * base so assigning any orthogonal matrix works. Returns the module.
   */
  function orthogonal(module, name = 'weight', orthogonalMap = null, options = {}) {
    if (name !== null && typeof name === 'object') { options = name; ({ name = 'weight', orthogonalMap = null } = name); }
    if (orthogonalMap !== null && typeof orthogonalMap === 'object') { options = orthogonalMap; ({ orthogonalMap = null } = orthogonalMap); }
    const { useTrivialization = true } = options;
    const weight = module[name];
    if (!(weight instanceof kd.Tensor)) {
      throw new KindlingError(`Module '${module.constructor.name}' has no parameter or buffer with name '${name}'`, 'KD_INVALID_ARGUMENT');
    }
    if (weight.ndim < 2) throw new KindlingError(`Expected a matrix or batch of matrices. Got a tensor of ${weight.ndim} dimensions.`, 'KD_INVALID_ARGUMENT');
    const [n, k] = weight.shape.slice(-2);
    const map = orthogonalMap === null ? (n === k ? 'matrix_exp' : 'householder') : orthogonalMap;
    if (!['matrix_exp', 'cayley', 'householder'].includes(map)) {
      throw new KindlingError(`orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: ${map}`, 'KD_INVALID_ARGUMENT');
    }
    registerParametrization(module, name, new Orthogonal(weight, map, useTrivialization), { unsafe: true });
    return module;
  }

  nn.utils.parametrizations = { orthogonal, spectralNorm };
};
