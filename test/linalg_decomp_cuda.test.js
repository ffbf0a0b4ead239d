// linalg_decomp_cuda.test.js - kd.linalg on CUDA (cuSOLVER: cuda/ops_linalg.cu) against the CPU
// (LAPACK): det/slogdet/logdet, inv, solve (matrix, vector and broadcast right-hand sides, both
// sides), solveTriangular, cholesky (lower/upper), eigh/eigvalsh, qr (every mode), svd/svdvals/pinv, float32 and float64, batched and non-contiguous inputs, the
// lstsq (driver gels, through QR), the singular / not positive-definite errors, gradients computed
// on the device, and the clean KD_NOT_SUPPORTED of the factorizations not connected yet. Runs where CUDA is available: on a
// GPU, or on the emulated GPU (test/emulated-gpu.mocharc.json).
'use strict';

const { kd, assert } = require('./helpers');

const TOL = { float32: 2e-5, float64: 1e-12 };

describe('linalg on CUDA (CUDA vs CPU)', function () {
  if (!kd.cuda.isAvailable()) return; // nothing to compare without a CUDA device
  this.timeout(120000);
  const cuda = (t) => t.to({ device: 'cuda' });
  function close(g, c, dtype, what) {
    assert.equal(g.device.startsWith('cuda'), true, `${what}: result on ${g.device}`);
    const h = g.to({ device: 'cpu' });
    assert.deepEqual(h.shape, c.shape, what);
    const d = kd.sub(h, c).abs().max().item();
    const scale = Math.max(1, c.abs().max().item());
    assert.ok(d <= TOL[dtype] * scale, `${what} (${dtype}): max difference ${d}`);
  }

  for (const dtype of ['float32', 'float64']) {
    const A = kd.tensor([[[4, 1, 2], [1, 3, 0], [2, 0, 5]], [[0, 1, 0], [1, 0, 0], [0, 0, 2]], [[1, 2, 3], [0, 4, 5], [1, 0, 6]]],
      { dtype });
    const P = kd.tensor([[4, 1, 2], [1, 3, 0], [2, 0, 5]], { dtype });
    const B = kd.tensor([[1, 2], [3, 4], [5, 6]], { dtype });

    it(`det, slogdet, logdet (${dtype})`, function () {
      close(kd.linalg.det(cuda(A)), kd.linalg.det(A), dtype, 'det');
      close(kd.det(cuda(A.transpose(-2, -1))), kd.det(A.transpose(-2, -1)), dtype, 'det of a transposed batch');
      const s = kd.linalg.slogdet(cuda(A));
      close(s.sign, kd.linalg.slogdet(A).sign, dtype, 'slogdet sign');
      close(s.logabsdet, kd.linalg.slogdet(A).logabsdet, dtype, 'slogdet logabsdet');
      const ld = kd.logdet(cuda(A)).to({ device: 'cpu' }).arraySync();
      const ref = kd.logdet(A).arraySync();
      ld.forEach((v, i) => (Number.isNaN(ref[i]) ? assert.ok(Number.isNaN(v)) : assert.ok(Math.abs(v - ref[i]) < 1e-5)));
      assert.equal(Math.abs(kd.linalg.det(cuda(kd.tensor([[1, 2], [2, 4]], { dtype }))).item()), 0); // singular
    });

    it(`inv and solve (${dtype})`, function () {
      close(kd.linalg.inv(cuda(A)), kd.linalg.inv(A), dtype, 'inv');
      close(kd.inverse(cuda(A.transpose(-2, -1))), kd.inverse(A.transpose(-2, -1)), dtype, 'inverse of a transposed batch');
      close(kd.linalg.solve(cuda(A), cuda(B)), kd.linalg.solve(A, B), dtype, 'solve (broadcast B)');
      close(kd.linalg.solve(cuda(A), cuda(B.t()), { left: false }), kd.linalg.solve(A, B.t(), { left: false }), dtype, 'solve XA = B');
      const v = kd.tensor([1, 2, 3], { dtype });
      close(kd.linalg.solve(cuda(A), cuda(v)), kd.linalg.solve(A, v), dtype, 'solve vector rhs');
    });

    it(`cholesky (${dtype})`, function () {
      close(kd.linalg.cholesky(cuda(P)), kd.linalg.cholesky(P), dtype, 'cholesky');
      close(kd.linalg.cholesky(cuda(P), { upper: true }), kd.linalg.cholesky(P, { upper: true }), dtype, 'cholesky upper');
      close(kd.cholesky(cuda(P.expand([2, 3, 3]))), kd.cholesky(P.expand([2, 3, 3])), dtype, 'torch.cholesky batched');
    });

    it(`eigh, eigvalsh (${dtype}): eigenvalues, and eigenvectors up to their signs`, function () {
      const S = kd.add(A, A.transpose(-2, -1)); // symmetric, distinct eigenvalues
      for (const uplo of ['L', 'U']) {
        const g = kd.linalg.eigh(cuda(S), uplo);
        const c = kd.linalg.eigh(S, uplo);
        close(g.eigenvalues, c.eigenvalues, dtype, `eigh ${uplo} eigenvalues`);
        close(g.eigenvectors.abs(), c.eigenvectors.abs(), dtype, `eigh ${uplo} |eigenvectors|`);
        const V = g.eigenvectors;
        close(kd.matmul(V.mul(g.eigenvalues.unsqueeze(-2)), V.transpose(-2, -1)), S, dtype, `eigh ${uplo} rebuilds A`);
      }
      close(kd.linalg.eigvalsh(cuda(kd.tril(S))), kd.linalg.eigvalsh(S), dtype, 'eigvalsh reads the lower triangle');
      close(kd.linalg.matrixRank(cuda(S), { hermitian: true }), kd.linalg.matrixRank(S, { hermitian: true }), dtype, 'matrixRank hermitian');
    });

    it(`qr (${dtype}): Q R = A, orthonormal Q, R as the CPU's up to row signs, every mode`, function () {
      const M = kd.tensor([[[2, 1, 0], [1, 3, 1], [0, 1, 4], [1, 0, 1]], [[1, 2, 0], [0, 1, 1], [1, 0, 1], [2, 2, 2]]], { dtype });
      for (const [X, mode] of [[M, 'reduced'], [M, 'complete'], [M.transpose(-2, -1), 'reduced'], [M.transpose(-2, -1), 'complete']]) {
        const { Q, R } = kd.linalg.qr(cuda(X), mode);
        const c = kd.linalg.qr(X, mode);
        assert.deepEqual(Q.shape, c.Q.shape, `${mode} Q shape`);
        close(kd.matmul(Q, R), X, dtype, `qr ${mode} rebuilds A`);
        const qc = Q.shape[Q.shape.length - 1];
        close(kd.matmul(Q.transpose(-2, -1), Q), kd.eye(qc, { dtype }).expand([2, qc, qc]), dtype, `qr ${mode} Q orthonormal`);
        close(R.abs(), c.R.abs(), dtype, `qr ${mode} |R|`);
      }
      assert.deepEqual(kd.linalg.qr(cuda(M), 'r').Q.shape, [0]);
      close(kd.qr(cuda(M)).R.abs(), kd.qr(M).R.abs(), dtype, 'torch.qr');
    });

    it(`svd, svdvals (${dtype}): singular values, U diag(S) Vh = A, orthonormal factors, tall and wide`, function () {
      const M = kd.tensor([[[2, 1, 0], [1, 3, 1], [0, 1, 4], [1, 0, 1]], [[1, 2, 0], [0, 1, 1], [1, 0, 1], [2, 2, 2]]], { dtype });
      for (const X of [M, M.transpose(-2, -1)]) {
        for (const full of [false, true]) {
          const { U, S, Vh } = kd.linalg.svd(cuda(X), full);
          const c = kd.linalg.svd(X, full);
          assert.deepEqual(U.shape, c.U.shape);
          assert.deepEqual(Vh.shape, c.Vh.shape);
          close(S, c.S, dtype, 'singular values');
          const k = S.shape[S.shape.length - 1];
          const Uk = U.narrow(-1, 0, k);
          const Vk = Vh.narrow(-2, 0, k);
          close(kd.matmul(Uk.mul(S.unsqueeze(-2)), Vk), X, dtype, 'U diag(S) Vh = A');
          const uc = U.shape[U.shape.length - 1];
          const vr = Vh.shape[Vh.shape.length - 2];
          close(kd.matmul(U.transpose(-2, -1), U), kd.eye(uc, { dtype }).expand([2, uc, uc]), dtype, 'U orthonormal');
          close(kd.matmul(Vh, Vh.transpose(-2, -1)), kd.eye(vr, { dtype }).expand([2, vr, vr]), dtype, 'Vh orthonormal');
        }
        close(kd.linalg.svdvals(cuda(X)), kd.linalg.svdvals(X), dtype, 'svdvals');
        close(kd.svd(cuda(X)).V.abs(), kd.svd(X).V.abs(), dtype, 'torch.svd |V|');
        close(kd.linalg.pinv(cuda(X)), kd.linalg.pinv(X), dtype, 'pinv');
        close(kd.linalg.matrixNorm(cuda(X), 'nuc'), kd.linalg.matrixNorm(X, 'nuc'), dtype, 'nuclear norm');
      }
    });

    it(`solveTriangular (${dtype}): both sides, both triangles, unit diagonal, broadcast`, function () {
      const T = kd.add(A, kd.eye(3, { dtype }).mul(4)); // nonzero diagonals
      for (const upper of [true, false]) {
        for (const unitriangular of [false, true]) {
          const o = { upper, unitriangular };
          close(kd.linalg.solveTriangular(cuda(T), cuda(B), o), kd.linalg.solveTriangular(T, B, o), dtype, `left ${upper} ${unitriangular}`);
          const ol = { upper, unitriangular, left: false };
          close(kd.linalg.solveTriangular(cuda(T), cuda(B.t()), ol), kd.linalg.solveTriangular(T, B.t(), ol), dtype, `right ${upper} ${unitriangular}`);
        }
      }
    });

    it(`gradients of cholesky and qr on the device (${dtype})`, function () {
      const y = cuda(P).requiresGrad_();
      const yc = P.clone().requiresGrad_();
      kd.linalg.cholesky(y).sum().backward();
      kd.linalg.cholesky(yc).sum().backward();
      close(y.grad, yc.grad, dtype, 'cholesky gradient');
      const z = cuda(P).requiresGrad_();
      const zc = P.clone().requiresGrad_();
      kd.linalg.qr(z).R.abs().sum().backward(); // |R|: the same on both whatever the signs
      kd.linalg.qr(zc).R.abs().sum().backward();
      close(z.grad, zc.grad, dtype, 'qr gradient');
    });

    it(`errors: singular, not positive-definite, not connected (${dtype})`, function () {
      const S = cuda(kd.tensor([[[1, 0], [0, 1]], [[1, 2], [2, 4]]], { dtype }));
      assert.throws(() => kd.linalg.inv(S), (e) => e.code === 'KD_LINALG_ERROR' && /\(Batch element 1\): The diagonal element 2 is zero/.test(e.message));
      assert.throws(() => kd.linalg.solve(S, cuda(kd.ones([2], { dtype }))), (e) => e.code === 'KD_LINALG_ERROR' && /singular/.test(e.message));
      assert.throws(() => kd.linalg.cholesky(cuda(A)), (e) => e.code === 'KD_LINALG_ERROR' &&
        /\(Batch element 1\): .*leading minor of order 1 is not positive-definite/.test(e.message));
      // PyTorch's CUDA lstsq has the driver gels only
      assert.throws(() => kd.linalg.lstsq(cuda(A), cuda(A), { driver: 'gelsy' }),
        (e) => e.code === 'KD_INVALID_ARGUMENT' && /other than `gels` is not supported on CUDA/.test(e.message));
    });

    it(`empty matrices: det family of 0 x 0 batches, qr and svd with a 0 dim or an empty batch (${dtype})`, function () {
      const same = (g, c, what) => { // close() for results that may have no elements
        if (c.numel()) return close(g, c, dtype, what);
        assert.ok(g.device.startsWith('cuda'), `${what}: result on ${g.device}`);
        return assert.deepEqual(g.shape, c.shape, what);
      };
      const E = kd.zeros([3, 0, 0], { dtype });
      close(kd.linalg.det(cuda(E)), kd.linalg.det(E), dtype, 'det of 0 x 0 matrices');
      close(kd.linalg.slogdet(cuda(E)).logabsdet, kd.linalg.slogdet(E).logabsdet, dtype, 'slogdet of 0 x 0 matrices');
      for (const shape of [[5, 0], [0, 3], [0, 4, 2]]) {
        const Z = kd.zeros(shape, { dtype });
        for (const mode of ['reduced', 'complete', 'r']) {
          const g = kd.linalg.qr(cuda(Z), mode);
          const c = kd.linalg.qr(Z, mode);
          same(g.Q, c.Q, `qr ${mode} of [${shape}]: Q`);
          same(g.R, c.R, `qr ${mode} of [${shape}]: R`);
        }
        for (const full of [true, false]) {
          const g = kd.linalg.svd(cuda(Z), full);
          const c = kd.linalg.svd(Z, full);
          ['U', 'S', 'Vh'].forEach((k) => same(g[k], c[k], `svd full=${full} of [${shape}]: ${k}`));
        }
      }
    });

    it(`lstsq (gels through QR): tall, square, wide, batched, vector right-hand sides, residuals (${dtype})`, function () {
      const T = kd.tensor([[2, -1, 0.5], [1, 3, -2], [0, 1, 4], [1.5, -0.5, 1]], { dtype });
      const R = kd.tensor([[1, -2], [0.5, 3], [2, 1], [-1, 0.25]], { dtype });
      const cases = [[T, R, 'tall'], [A, B.unsqueeze(0), 'square batch, broadcast B'], [T.t(), R.narrow(0, 0, 3), 'wide (minimum norm)'],
        [T, R.select(1, 0), 'vector'], [T.unsqueeze(0).expand([2, 4, 3]).contiguous(), R.unsqueeze(0).expand([2, 4, 2]), 'batched tall']];
      for (const [a, b, what] of cases) {
        const g = kd.linalg.lstsq(cuda(a), cuda(b));
        const c = kd.linalg.lstsq(a, b, { driver: 'gels' });
        close(g.solution, c.solution, dtype, `lstsq ${what}: solution`);
        if (c.residuals.numel()) close(g.residuals, c.residuals, dtype, `lstsq ${what}: residuals`);
        else assert.deepEqual(g.residuals.shape, [0], what);
        assert.deepEqual([g.rank.shape, g.singularValues.shape], [[0], [0]], what);
      }
      const x = cuda(T).requiresGrad_();
      const xc = T.clone().requiresGrad_();
      kd.linalg.lstsq(x, cuda(R)).solution.sum().backward();
      kd.linalg.lstsq(xc, R, { driver: 'gels' }).solution.sum().backward();
      close(x.grad, xc.grad, dtype, 'lstsq gradient');
    });

    it(`gradients on the device (${dtype})`, function () {
      const x = cuda(A).requiresGrad_();
      const xc = A.clone().requiresGrad_();
      kd.linalg.inv(x).sum().backward();
      kd.linalg.inv(xc).sum().backward();
      close(x.grad, xc.grad, dtype, 'inv gradient');
      const y = cuda(P).requiresGrad_();
      const yc = P.clone().requiresGrad_();
      kd.linalg.det(y).backward();
      kd.linalg.det(yc).backward();
      close(y.grad, yc.grad, dtype, 'det gradient');
    });
  }
});
