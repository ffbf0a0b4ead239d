// oplist/linalg_decomp.js - torch.linalg (PyTorch 1.13): determinants, inverse and solves,
// Cholesky, QR, SVD, symmetric eigendecomposition, least squares, pseudo-inverse, rank, norms and
// the cross product, in kd.linalg, plus torch's top-level forms (det, logdet, slogdet, inverse,
// pinverse, cholesky, qr, svd, cross). Part of the op list (see ./index.js).
// Kernels: src/cpu/linalg_lapack.c (LAPACK, one code per factorization); composites and the
// backward helpers that need shapes: src/ops/linalg_decomp_composites.c. Op names are PyTorch's
// aten names (linalg_inv -> linalgInv, which is also how autocast_policy.js finds them); the JS
// name in kd.linalg is `jsname`. Gradients are PyTorch's formulas (FunctionsManual.cpp).
'use strict';

const fn = ['function', 'method'];
const LA = ['linalg'];
const MT = (x) => `${x}.transpose(-2, -1)`;
// diag_embed(v): v on the diagonal of a square matrix (tril of triu of the rows v_i)
const DIAG = (v) => `triu(tril(${v}.unsqueeze(-1) * onesLike(${v}).unsqueeze(-2)))`;
const UNSQ2 = (x) => `(${x}).unsqueeze(-1).unsqueeze(-1)`;
// d log|det A| / dA = A^{-T} (det: times det, as PyTorch's linalg_det_backward for invertible A)
const INV_T = MT('linalgInv(self)');

// cholesky_backward (Iain Murray, arXiv 1602.07527): with L lower (upper: the transposes)
//   gA = L^{-H} Phi(L^H gL) L^{-1},  Phi(X) = 0.5 * (tril(X) + tril(X, -1)^H)
const CHOL_L = `(upper ? ${MT('result')} : result)`;
const CHOL_G = `(upper ? ${MT('grad')} : grad)`;
const CHOL_P = `tril(matmul(${MT(CHOL_L)}, ${CHOL_G}))`;
const CHOL_PHI = `((${CHOL_P} + ${MT(`tril(${CHOL_P}, -1)`)}) * 0.5)`;
const CHOLESKY_GRAD = `linalgSolveTriangular(${CHOL_L}, linalgSolveTriangular(${MT(CHOL_L)}, ${CHOL_PHI}, upper=true, ` +
  'left=true), upper=false, left=false)';

// linalg_eig_backward, hermitian case: gA = V (diag(gL) + skew(V^H gV)/2 / E) V^H with
// E_ij = L_j - L_i; a zero numerator gives 0 (eigvalsh: no gradient reaches V, and repeated
// eigenvalues must not turn that into NaN)
const EIG_K = `((matmul(${MT('result1')}, grad1) - ${MT(`matmul(${MT('result1')}, grad1)`)}) * 0.5)`;
const EIGH_GRAD = `matmul(result1, matmul(where(${EIG_K} == 0, 0, ${EIG_K} / (result.unsqueeze(-2) - result.unsqueeze(-1))) + ` +
  `${DIAG('grad')}, ${MT('result1')}))`;

module.exports = [
  // ---- determinants ----
  { name: 'det', args: 'Tensor self', returns: 'Tensor', variants: fn, ns: ['', 'linalg'], kind: 'linalg',
    code: 'KD_LAPACK_DET', cpu: 'kd_cpu_linalg', backward: { self: `${UNSQ2('grad * result')} * ${INV_T}` },
    doc: 'Determinant of each square matrix of the batch (LU factorization).' },
  { name: 'slogdet', args: 'Tensor self', returns: '(Tensor sign, Tensor logabsdet)', variants: fn, ns: ['', 'linalg'],
    kind: 'linalg', code: 'KD_LAPACK_SLOGDET', cpu: 'kd_cpu_linalg', backward: { self: `${UNSQ2('grad1')} * ${INV_T}` },
    doc: 'Sign and log of the absolute value of the determinant (sign 0, logabsdet -inf for a singular matrix).' },
  { name: 'logdet', args: 'Tensor self', returns: 'Tensor', variants: fn, kind: 'linalg', code: 'KD_LAPACK_LOGDET',
    cpu: 'kd_cpu_linalg', backward: { self: `${UNSQ2('where(isnan(result), 0, grad)')} * ${INV_T}` },
    doc: 'Log of the determinant: NaN for a negative determinant, -inf for a singular matrix.' },

  // ---- inverse and solves ----
  { name: 'linalgInv', jsname: 'inv', args: 'Tensor self', returns: 'Tensor', variants: ['function'], ns: LA,
    kind: 'linalg', code: 'KD_LAPACK_INV', cpu: 'kd_cpu_linalg',
    backward: { self: `-matmul(${MT('result')}, matmul(grad, ${MT('result')}))` },
    doc: 'Inverse of each square matrix (LinAlgError for a singular one).' },
  { name: 'inverse', args: 'Tensor self', returns: 'Tensor', variants: fn, kind: 'linalg', code: 'KD_LAPACK_INV',
    cpu: 'kd_cpu_linalg', backward: { self: `-matmul(${MT('result')}, matmul(grad, ${MT('result')}))` },
    doc: 'Alias of linalg.inv.' },
  { name: 'linalgSolve', jsname: 'solve', args: 'Tensor self, Tensor B, *, bool left=true', returns: 'Tensor',
    variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_solve',
    doc: 'X with A X = B (left) or X A = B; B a batch of matrices or of vectors (A.shape[:-1]).' },
  { name: 'linalgSolveMatrix', args: 'Tensor self, Tensor B, bool left', returns: 'Tensor', variants: ['function'],
    ns: ['_internal'], kind: 'linalg', code: 'KD_LAPACK_SOLVE', cpu: 'kd_cpu_linalg',
    backward: {
      self: `left ? -matmul(linalgSolveMatrix(${MT('self')}, grad, true), ${MT('result')}) : ` +
        `-matmul(${MT('result')}, linalgSolveMatrix(${MT('self')}, grad, false))`,
      B: `linalgSolveMatrix(${MT('self')}, grad, left)`,
    },
    doc: 'linalg.solve on a batch of matrix right-hand sides (getrf + getrs), batch dims broadcast.' },
  { name: 'linalgSolveTriangular', jsname: 'solveTriangular',
    args: 'Tensor self, Tensor B, *, bool upper, bool left=true, bool unitriangular=false', returns: 'Tensor',
    variants: ['function'], ns: LA, kind: 'linalg', code: 'KD_LAPACK_SOLVE_TRIANGULAR', cpu: 'kd_cpu_linalg',
    backward: {
      self: `upper ? triu(left ? -matmul(linalgSolveTriangular(${MT('self')}, grad, upper=false, left=left, ` +
        `unitriangular=unitriangular), ${MT('result')}) : -matmul(${MT('result')}, linalgSolveTriangular(${MT('self')}, grad, ` +
        `upper=false, left=left, unitriangular=unitriangular)), unitriangular ? 1 : 0) : tril(left ? ` +
        `-matmul(linalgSolveTriangular(${MT('self')}, grad, upper=true, left=left, unitriangular=unitriangular), ` +
        `${MT('result')}) : -matmul(${MT('result')}, linalgSolveTriangular(${MT('self')}, grad, upper=true, left=left, ` +
        'unitriangular=unitriangular)), unitriangular ? -1 : 0)',
      B: `linalgSolveTriangular(${MT('self')}, grad, upper=upper ? false : true, left=left, unitriangular=unitriangular)`,
    },
    doc: 'X with A X = B (left) or X A = B for triangular A (only its upper or lower triangle is read).' },

  // ---- factorizations ----
  { name: 'linalgCholesky', jsname: 'cholesky', args: 'Tensor self, *, bool upper=false', returns: 'Tensor',
    variants: ['function'], ns: LA, kind: 'linalg', code: 'KD_LAPACK_CHOLESKY', cpu: 'kd_cpu_linalg',
    backward: { self: CHOLESKY_GRAD },
    doc: 'Cholesky factor L (A = L L^T; upper: U = L^T) of symmetric positive-definite matrices (reads the lower triangle).' },
  { name: 'cholesky', args: 'Tensor self, bool upper=false', returns: 'Tensor', variants: fn, kind: 'linalg',
    code: 'KD_LAPACK_CHOLESKY_OLD', cpu: 'kd_cpu_linalg', backward: { self: CHOLESKY_GRAD },
    doc: 'torch.cholesky: as linalg.cholesky with upper positional.' },
  { name: 'linalgQr', jsname: 'qr', args: "Tensor self, str mode='reduced'", returns: '(Tensor Q, Tensor R)',
    variants: ['function'], ns: LA, kind: 'linalg', code: 'KD_LAPACK_QR', cpu: 'kd_cpu_linalg',
    backward: { self: 'linalgQrBackward(grad, grad1, result, result1, mode)' },
    doc: "QR decomposition (geqrf + orgqr), mode 'reduced', 'complete' or 'r' (Q empty)." },
  { name: 'qr', args: 'Tensor self, bool some=true', returns: '(Tensor Q, Tensor R)', variants: fn, kind: 'linalg',
    code: 'KD_LAPACK_QR_OLD', cpu: 'kd_cpu_linalg',
    backward: { self: "linalgQrBackward(grad, grad1, result, result1, some ? 'reduced' : 'complete')" },
    doc: "torch.qr: linalg.qr with mode 'reduced' (some) or 'complete'." },
  { name: 'linalgSvd', jsname: 'svd', args: 'Tensor self, bool fullMatrices=true, *, str? driver',
    returns: '(Tensor U, Tensor S, Tensor Vh)', variants: ['function'], ns: LA, kind: 'linalg', code: 'KD_LAPACK_SVD',
    cpu: 'kd_cpu_linalg', backward: { self: 'linalgSvdBackward(grad, grad1, grad2, result, result1, result2, fullMatrices)' },
    doc: 'Singular value decomposition A = U diag(S) Vh (gesdd), singular values descending.' },
  { name: 'svd', args: 'Tensor self, bool some=true, bool computeUv=true', returns: '(Tensor U, Tensor S, Tensor V)',
    variants: fn, kind: 'linalg', code: 'KD_LAPACK_SVD_OLD', cpu: 'kd_cpu_linalg',
    backward: {
      self: `linalgSvdBackward(grad, grad1, ${MT('grad2')}, result, result1, ${MT('result2')}, some ? false : true)`,
    },
    doc: 'torch.svd: U, S and V (not Vh); some=false for the full U and V; computeUv=false gives zero U and V.' },
  { name: 'linalgSvdvals', jsname: 'svdvals', args: 'Tensor self, *, str? driver', returns: 'Tensor',
    variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_svdvals',
    doc: 'Singular values, descending.' },
  { name: 'linalgEigh', jsname: 'eigh', args: "Tensor self, str UPLO='L'", returns: '(Tensor eigenvalues, Tensor eigenvectors)',
    variants: ['function'], ns: LA, kind: 'linalg', code: 'KD_LAPACK_EIGH', cpu: 'kd_cpu_linalg', backward: { self: EIGH_GRAD },
    doc: 'Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices (syevd; UPLO: the triangle read).' },
  { name: 'linalgEigvalsh', jsname: 'eigvalsh', args: "Tensor self, str UPLO='L'", returns: 'Tensor', variants: ['function'],
    ns: LA, kind: 'composite', composite: 'kd_composite_linalg_eigvalsh', doc: 'Eigenvalues (ascending) of symmetric matrices.' },
  { name: 'linalgLstsq', jsname: 'lstsq', args: 'Tensor self, Tensor b, float? rcond, *, str? driver',
    returns: '(Tensor solution, Tensor residuals, Tensor rank, Tensor singularValues)', variants: ['function'], ns: LA,
    kind: 'linalg', code: 'KD_LAPACK_LSTSQ', cpu: 'kd_cpu_linalg',
    backward: {
      self: `pinvBackward(matmul(grad, ${MT('b')}), linalgPinv(self), self)`,
      b: `matmul(${MT('linalgPinv(self)')}, grad)`,
    },
    doc: "Least-squares solution of A X = B (driver 'gelsy', the CPU default, 'gels', 'gelsd' or 'gelss'; 'gels' on CUDA): solution, residuals, rank, singularValues (as PyTorch's per driver)." },

  // ---- pseudo-inverse and rank ----
  // pinv is a composite below autograd (`generic`) with PyTorch's own pinv_backward, so that its
  // gradient does not depend on the triangle eigh reads (hermitian=true)
  { name: 'linalgPinv', jsname: 'pinv', args: 'Tensor self, *, float? atol, float? rtol, bool hermitian=false',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', code: 'KD_LACOMP_PINV', generic: 'kd_composite_linalg_pinv',
    backward: { self: 'pinvBackward(grad, result, self)' },
    doc: 'Moore-Penrose pseudo-inverse (SVD, or eigh when hermitian); singular values <= max(atol, rtol * max(S)) are dropped.' },
  { name: 'pinverse', args: 'Tensor self, float rcond=1e-15', returns: 'Tensor', variants: fn, kind: 'composite',
    code: 'KD_LACOMP_PINVERSE', generic: 'kd_composite_linalg_pinv', backward: { self: 'pinvBackward(grad, result, self)' }, doc: 'torch.pinverse: linalg.pinv with rtol=rcond.' },
  { name: 'linalgMatrixRank', jsname: 'matrixRank', args: 'Tensor self, *, float? atol, float? rtol, bool hermitian=false',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_matrix_rank',
    flags: ['nondiff'], doc: 'Number of singular values > max(atol, rtol * max(S)) (int64).' },

  // ---- norms ----
  { name: 'linalgVectorNorm', jsname: 'vectorNorm', args: 'Tensor self, float ord=2, int[]? dim, bool keepdim=false, *, dtype? dtype',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_vector_norm',
    doc: 'Vector ord-norm over dim (all elements when omitted): ord any number, Infinity, -Infinity or 0.' },
  { name: 'linalgMatrixNorm', jsname: 'matrixNorm', args: 'Tensor self, float ord, int[]? dim, bool keepdim=false, *, dtype? dtype',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_matrix_norm',
    doc: 'Matrix norm over the two dims: ord 1, -1, 2, -2, Infinity, -Infinity.' },
  { name: 'linalgMatrixNorm.strOrd', jsname: 'matrixNorm', args: "Tensor self, str ord='fro', int[]? dim, bool keepdim=false, *, dtype? dtype",
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_matrix_norm',
    doc: "Matrix norm over the two dims: ord 'fro' (default) or 'nuc'." },
  { name: 'linalgNorm', jsname: 'norm', args: 'Tensor self, float? ord, int[]? dim, bool keepdim=false, *, dtype? dtype',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_norm',
    doc: 'linalg.vector_norm or linalg.matrix_norm, by ord and dim (2-norm of all elements by default).' },
  { name: 'linalgNorm.ordStr', jsname: 'norm', args: 'Tensor self, str ord, int[]? dim, bool keepdim=false, *, dtype? dtype',
    returns: 'Tensor', variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_norm',
    doc: "linalg.matrix_norm with ord 'fro' or 'nuc'." },

  // ---- cross product ----
  { name: 'linalgCross', jsname: 'cross', args: 'Tensor self, Tensor other, *, int dim=-1', returns: 'Tensor',
    variants: ['function'], ns: LA, kind: 'composite', composite: 'kd_composite_linalg_cross',
    doc: 'Cross product of 3-vectors along dim (inputs broadcast, same number of dims).' },
  { name: 'cross', args: 'Tensor self, Tensor other, int? dim', returns: 'Tensor', variants: fn, kind: 'composite',
    composite: 'kd_composite_linalg_cross', doc: 'torch.cross: dim defaults to the first dim of size 3.' },

  // ---- backward helpers (kd._internal) ----
  { name: 'linalgQrBackward', args: 'Tensor gradQ, Tensor gradR, Tensor Q, Tensor R, str mode', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_linalg_qr_backward',
    doc: 'Gradient of linalg.qr (PyTorch\'s linalg_qr_backward).' },
  { name: 'linalgSvdBackward', args: 'Tensor gradU, Tensor gradS, Tensor gradVh, Tensor U, Tensor S, Tensor Vh, bool fullMatrices',
    returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_linalg_svd_backward',
    doc: 'Gradient of linalg.svd (PyTorch\'s svd_backward; full U/Vh narrowed to the k singular vectors).' },
  { name: 'pinvBackward', args: 'Tensor grad, Tensor pinvA, Tensor A', returns: 'Tensor', variants: ['function'],
    ns: ['_internal'], kind: 'composite', composite: 'kd_composite_pinv_backward',
    doc: 'Gradient of the pseudo-inverse (PyTorch\'s pinv_backward).' },
];
