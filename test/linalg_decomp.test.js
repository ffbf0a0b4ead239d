// linalg_decomp.test.js - torch.linalg against PyTorch (test/fixtures/linalg_decomp.json): values,
// gradients (test/autograd_parity.test.js runs the recorded ones) and errors; then what fixtures
// cannot say: factorizations checked by what is unique about them (A rebuilt from Q R, U S Vh,
// V diag(L) V^T, L L^T; orthonormal factors), large batched float64 cases, gradchecks of
// cholesky/eigh through a symmetric parametrization, JS call forms and tuple names.
'use strict';

const { kd, assert, parityTests } = require('./helpers');

parityTests('linalg_decomp');

const f64 = { dtype: 'float64' };
/** Deterministic values in [-1, 1) (an LCG), as a float64 tensor of the shape. */
function rand(shape, seed = 7) {
  let s = seed >>> 0;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    data[i] = s / 2 ** 31 - 1;
  }
  return kd.tensor(data, f64).reshape(shape);
}
const mT = (x) => x.transpose(-2, -1);
const eye = (n) => kd.eye(n, { dtype: 'float64' });
function spdOf(m) { // M M^T / n + I
  const n = m.shape[m.shape.length - 1];
  return kd.matmul(m, mT(m)).div(n).add(eye(n));
}
function maxAbsDiff(a, b) {
  return kd.sub(a, b).abs().max().item();
}

describe('linalg: factorizations rebuild their input (large float64 batches)', function () {
  const A = rand([16, 12, 8], 1);
  const Sq = rand([16, 10, 10], 2).add(eye(10).mul(3));
  const P = spdOf(rand([16, 10, 10], 3));

  it('qr: Q R = A, Q orthonormal, R upper triangular (reduced and complete)', function () {
    const [Q, R] = kd.linalg.qr(A);
    assert.deepEqual(Q.shape, [16, 12, 8]);
    assert.deepEqual(R.shape, [16, 8, 8]);
    assert.ok(maxAbsDiff(kd.matmul(Q, R), A) < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(mT(Q), Q), eye(8)) < 1e-12);
    assert.equal(maxAbsDiff(R, R.triu()), 0);
    const c = kd.linalg.qr(A, 'complete');
    assert.deepEqual(c.Q.shape, [16, 12, 12]);
    assert.ok(maxAbsDiff(kd.matmul(c.Q, c.R), A) < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(mT(c.Q), c.Q), eye(12)) < 1e-12);
    assert.deepEqual(kd.linalg.qr(A, { mode: 'r' }).Q.shape, [0]);
  });

  it('svd: U diag(S) Vh = A, orthonormal U and V, S descending and equal to svdvals', function () {
    const { U, S, Vh } = kd.linalg.svd(A, false);
    assert.ok(maxAbsDiff(kd.matmul(U.mul(S.unsqueeze(-2)), Vh), A) < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(mT(U), U), eye(8)) < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(Vh, mT(Vh)), eye(8)) < 1e-12);
    const s = S.arraySync();
    for (const row of s) for (let i = 1; i < row.length; i++) assert.ok(row[i - 1] >= row[i]);
    assert.ok(maxAbsDiff(kd.linalg.svdvals(A), S) < 1e-12);
    const full = kd.linalg.svd(A); // fullMatrices=true
    assert.deepEqual(full.U.shape, [16, 12, 12]);
    assert.ok(maxAbsDiff(kd.matmul(mT(full.U), full.U), eye(12)) < 1e-12);
    const old = kd.svd(A); // torch.svd: V, not Vh
    assert.ok(maxAbsDiff(kd.matmul(old.U.mul(old.S.unsqueeze(-2)), mT(old.V)), A) < 1e-12);
  });

  it('eigh: V diag(L) V^T = A, V orthonormal, L ascending and equal to eigvalsh; det = prod(L)', function () {
    const { eigenvalues: L, eigenvectors: V } = kd.linalg.eigh(P);
    assert.ok(maxAbsDiff(kd.matmul(V.mul(L.unsqueeze(-2)), mT(V)), P) < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(mT(V), V), eye(10)) < 1e-12);
    assert.ok(maxAbsDiff(kd.linalg.eigvalsh(P), L) < 1e-12);
    assert.ok(maxAbsDiff(kd.linalg.eigvalsh(P, 'U'), L) < 1e-12); // P is symmetric: either triangle
    const rel = kd.sub(kd.linalg.det(P), L.prod(-1)).abs().div(L.prod(-1)).max().item();
    assert.ok(rel < 1e-12);
    const { sign, logabsdet } = kd.linalg.slogdet(P);
    assert.ok(maxAbsDiff(logabsdet, L.log().sum(-1)) < 1e-11);
    assert.equal(sign.min().item(), 1);
  });

  it('cholesky: L L^T = A (lower), U^T U = A (upper)', function () {
    const L = kd.linalg.cholesky(P);
    assert.ok(maxAbsDiff(kd.matmul(L, mT(L)), P) < 1e-12);
    assert.equal(maxAbsDiff(L, L.tril()), 0);
    const U = kd.linalg.cholesky(P, { upper: true });
    assert.ok(maxAbsDiff(kd.matmul(mT(U), U), P) < 1e-12);
    assert.ok(maxAbsDiff(kd.cholesky(P, true), U) === 0);
  });

  it('inv, solve, solveTriangular, lstsq and pinv satisfy their equations', function () {
    assert.ok(maxAbsDiff(kd.matmul(Sq, kd.linalg.inv(Sq)), eye(10)) < 1e-12);
    const B = rand([16, 10, 3], 4);
    assert.ok(maxAbsDiff(kd.matmul(Sq, kd.linalg.solve(Sq, B)), B) < 1e-12);
    const Bt = rand([16, 3, 10], 5);
    assert.ok(maxAbsDiff(kd.matmul(kd.linalg.solve(Sq, Bt, { left: false }), Sq), Bt) < 1e-12);
    const T = Sq.triu();
    assert.ok(maxAbsDiff(kd.matmul(T, kd.linalg.solveTriangular(Sq, B, { upper: true })), B) < 1e-12);
    // least squares: the residual is orthogonal to the columns of A (normal equations)
    const b = rand([16, 12, 2], 6);
    const X = kd.linalg.lstsq(A, b).solution;
    assert.ok(kd.matmul(mT(A), kd.sub(kd.matmul(A, X), b)).abs().max().item() < 1e-12);
    assert.ok(maxAbsDiff(kd.matmul(kd.linalg.pinv(A), b), X) < 1e-12);
    assert.deepEqual(kd.linalg.lstsq(A, b).rank.arraySync(), new Array(16).fill(8));
  });

  it('float32 batches agree with the float64 results', function () {
    const a32 = A.to({ dtype: 'float32' });
    assert.ok(maxAbsDiff(kd.linalg.svdvals(a32).to({ dtype: 'float64' }), kd.linalg.svdvals(A)) < 1e-5);
    const p32 = P.to({ dtype: 'float32' });
    assert.ok(maxAbsDiff(kd.linalg.inv(p32).to({ dtype: 'float64' }), kd.linalg.inv(P)) < 1e-5);
    assert.equal(kd.linalg.det(p32).dtype, 'float32');
  });

  it('lstsq rcond drops singular values below rcond times the largest (gelsy)', function () {
    // singular values about 10, 1 and 0.01
    const G = kd.tensor([[10, 0.1, 0], [0.2, 1, 0.003], [0, 0.1, 0.01], [0.3, 0, 0]], f64);
    const b = kd.tensor([[-1.604], [1.738], [1.85], [1.252]], f64);
    assert.equal(kd.linalg.lstsq(G, b, 0.5).rank.item(), 1);
    assert.equal(kd.linalg.lstsq(G, b, 0.05).rank.item(), 2);
    assert.equal(kd.linalg.lstsq(G, b, 1e-5).rank.item(), 3);
    assert.equal(kd.linalg.lstsq(G, b).rank.item(), 3);
    assert.equal(kd.linalg.matrixRank(G, { rtol: 0.05 }).item(), 2);
    assert.equal(kd.linalg.matrixRank(G, { atol: 0.5 }).item(), 2);
  });

  it("lstsq drivers gels, gelsd, gelss as PyTorch's: solution, residuals, rank and singular values", function () {
    // PyTorch 1.13 values (torch.linalg.lstsq(A, B, driver=d) in float64)
    const A = kd.tensor([[2, -1, 0.5], [1, 3, -2], [0, 1, 4], [1.5, -0.5, 1]], f64);
    const B = kd.tensor([[1, -2], [0.5, 3], [2, 1], [-1, 0.25]], f64);
    const X = [[0.10113119621180813, -0.12456311774211734], [0.3588635424104625, 1.0646773648013828],
      [0.3541658837235521, 0.023826524860009784]];
    const res = [2.7701999323537154, 1.4071272877597802];
    const sv = [4.700273575196037, 3.23457588222232, 2.6823398704227563];
    const close = (t, want) => assert.ok(maxAbsDiff(t, kd.tensor(want, f64)) < 1e-12, `${t.arraySync()} vs ${want}`);
    const want = { // residuals, rank (null: an empty tensor), singular values
      gels: [res, null, null], gelsy: [null, 3, null], gelsd: [res, 3, sv], gelss: [res, 3, sv],
    };
    for (const [driver, [r, rank, s]] of Object.entries(want)) {
      const out = kd.linalg.lstsq(A, B, { driver });
      close(out.solution, X);
      if (r) close(out.residuals, r); else assert.deepEqual(out.residuals.shape, [0], driver);
      if (rank === null) assert.deepEqual(out.rank.shape, [0], driver); else assert.equal(out.rank.item(), rank, driver);
      if (s) close(out.singularValues, s); else assert.deepEqual(out.singularValues.shape, [0], driver);
    }
    // a vector right-hand side: the residual of its one column
    const v = kd.linalg.lstsq(A, B.select(1, 0), { driver: 'gels' });
    close(v.solution, X.map((row) => row[0]));
    close(v.residuals, [res[0]]);
    // rank-deficient (rank 2 of 3): gelsd/gelss give the minimum-norm solution and no residuals
    const G = kd.tensor([[1, 2, 3], [2, 4, 6], [1, 0, 1], [0, 1, 1]], f64);
    for (const driver of ['gelsd', 'gelss']) {
      const out = kd.linalg.lstsq(G, B, { driver });
      close(out.solution, [[1.6666666666666667, 0.5833333333333341], [-1.2564102564102562, -0.301282051282052],
        [0.4102564102564102, 0.2820512820512821]]);
      assert.deepEqual(out.residuals.shape, [0]);
      assert.equal(out.rank.item(), 2);
      close(out.singularValues, [8.539934920503985, 1.0341719168284527, 1.4604279606362004e-16]);
    }
    assert.throws(() => kd.linalg.lstsq(A, B, { driver: 'gelsx' }), (e) => e.code === 'KD_INVALID_ARGUMENT');
  });
});

describe('linalg: gradients', function () {
  const opts = { atol: 1e-5, rtol: 1e-3 };
  // cholesky and eigh read one triangle: gradcheck them as functions of M through A = M M^T / n + I
  it('gradcheck: cholesky, eigh, eigvalsh, pinv(hermitian) through a symmetric parametrization', function () {
    const M = rand([2, 3, 3], 11).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.cholesky(spdOf(m)), [M], opts));
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.cholesky(spdOf(m), { upper: true }), [M], opts));
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.eigh(spdOf(m)).eigenvalues, [M], opts));
    // eigenvectors: a loss invariant to their signs
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.eigh(spdOf(m)).eigenvectors.pow(2), [M], opts));
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.eigvalsh(spdOf(m)), [M], opts));
    assert.ok(kd.autograd.gradcheck((m) => kd.linalg.pinv(spdOf(m), { hermitian: true }), [M], opts));
  });

  it('gradcheck: svd (sign-invariant losses), qr, solve with vector and broadcast right-hand sides, lstsq', function () {
    const A = rand([2, 4, 3], 12).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a) => kd.linalg.svdvals(a), [A], opts));
    assert.ok(kd.autograd.gradcheck((a) => { const r = kd.linalg.svd(a, false); return kd.matmul(r.U, r.Vh); }, [A], opts));
    assert.ok(kd.autograd.gradcheck((a) => kd.linalg.qr(a).Q, [A], opts));
    const W = rand([2, 3, 4], 13).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a) => kd.linalg.qr(a).R, [W], opts));
    assert.ok(kd.autograd.gradcheck((a) => kd.linalg.matrixNorm(a, 'nuc'), [W], opts));
    const S = rand([2, 3, 3], 14).add(eye(3).mul(3)).requiresGrad_();
    const b = rand([3], 15).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a, v) => kd.linalg.solve(a, v), [S, b], opts));
    const B = rand([1, 4, 2], 16).requiresGrad_(); // broadcast over A's batch
    assert.ok(kd.autograd.gradcheck((a, y) => kd.linalg.lstsq(a, y).solution, [A, B], opts));
  });

  it("torch.norm's 'nuc' is linalg.matrix_norm's (gradient through the SVD), with PyTorch's checks", function () {
    const W = rand([3, 4, 2], 19).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a) => kd.norm(a, 'nuc', [2, 0], true), [W], opts));
    const ref = kd.linalg.matrixNorm(W.detach(), 'nuc', [2, 0], true);
    assert.deepStrictEqual(kd.norm(W.detach(), 'nuc', [2, 0], true).arraySync(), ref.arraySync());
    assert.throws(() => kd.norm(W, 'nuc'), /Expected a tensor with 2 dimensions, but got a tensor with 3 dimensions instead/);
    assert.throws(() => kd.norm(W, 'nuc', [0]), /nuclear norm requires a 'dim' argument of size 2/);
    assert.throws(() => kd.norm(W, 'nuc', [0, 1], false, { dtype: 'float32' }), /dtype argument is not supported in nuclear norm/);
    assert.throws(() => kd.norm(W, 'nux'), (e) => e.code === 'KD_INVALID_ARGUMENT' && /found nux/.test(e.message));
  });

  it('second derivatives: inv and det', function () {
    const S = rand([3, 3], 17).add(eye(3).mul(3)).requiresGrad_();
    assert.ok(kd.autograd.gradgradcheck((a) => kd.linalg.inv(a), [S], opts));
    assert.ok(kd.autograd.gradgradcheck((a) => kd.linalg.det(a), [S], opts));
  });

  it("qr mode 'r' and complete tall QR are not differentiable, with PyTorch's messages", function () {
    const A = rand([4, 3], 18).requiresGrad_();
    assert.throws(() => kd.linalg.qr(A, 'r').R.sum().backward(), /depends on Q, which is not computed when mode='r'/);
    assert.throws(() => kd.linalg.qr(A, 'complete').R.sum().backward(), /not differentiable when mode='complete' and nrows > ncols/);
  });
});

describe('linalg: API', function () {
  it('top-level forms and methods', function () {
    const A = kd.tensor([[4, 1], [1, 3]], f64);
    assert.equal(A.det().item(), kd.linalg.det(A).item());
    assert.equal(A.slogdet().sign.item(), 1);
    assert.ok(Math.abs(A.logdet().item() - Math.log(11)) < 1e-12);
    assert.ok(maxAbsDiff(A.inverse(), kd.linalg.inv(A)) === 0);
    assert.ok(maxAbsDiff(A.pinverse(), kd.linalg.pinv(A)) < 1e-12);
    assert.ok(maxAbsDiff(A.cholesky(), kd.linalg.cholesky(A)) === 0);
    assert.deepEqual(A.qr().length, 2);
    assert.deepEqual(A.svd().V.shape, [2, 2]);
    const u = kd.tensor([1, 0, 0], f64);
    const v = kd.tensor([0, 1, 0], f64);
    assert.deepEqual(u.cross(v).arraySync(), [0, 0, 1]);
    assert.deepEqual(kd.linalg.cross(u, v, { dim: 0 }).arraySync(), [0, 0, 1]);
  });

  it('norm forms: options objects, string orders, dims', function () {
    const A = kd.tensor([[1, -2], [3, 4]], f64);
    assert.ok(Math.abs(kd.linalg.norm(A).item() - Math.sqrt(30)) < 1e-12);
    assert.ok(Math.abs(kd.linalg.norm(A, 'fro').item() - Math.sqrt(30)) < 1e-12);
    assert.ok(Math.abs(kd.linalg.norm(A, { ord: Infinity }).item() - 7) < 1e-12);
    assert.ok(Math.abs(kd.linalg.matrixNorm(A, { ord: 1 }).item() - 6) < 1e-12);
    assert.ok(Math.abs(kd.linalg.matrixNorm(A).item() - Math.sqrt(30)) < 1e-12);
    assert.deepEqual(kd.linalg.vectorNorm(A, 1, [1], true).arraySync(), [[3], [7]]);
    assert.deepEqual(kd.linalg.vectorNorm(A, { ord: 0 }).item(), 4);
    assert.equal(kd.norm(A).item(), kd.linalg.norm(A).item()); // kd.norm is still torch.norm
  });

  it('singular and non-positive-definite inputs throw KD_LINALG_ERROR (a KindlingError)', function () {
    const S = kd.tensor([[1, 2], [2, 4]], f64);
    for (const f of [() => kd.linalg.inv(S), () => kd.linalg.solve(S, kd.ones([2], f64)), () => kd.linalg.cholesky(S)]) {
      assert.throws(f, (e) => e instanceof kd.KindlingError && e.code === 'KD_LINALG_ERROR');
    }
    assert.equal(kd.linalg.det(S).item(), 0);
    assert.equal(kd.linalg.slogdet(S).logabsdet.item(), -Infinity);
  });
});

describe('linalg: autocast', function () {
  it("CPU autocast runs PyTorch 1.13's float32 linalg ops (inv, cholesky, qr, svd, eigh, eigvalsh) in float32", function () {
    const A = kd.tensor([[4, 1], [1, 3]]).to({ dtype: 'bfloat16' });
    assert.throws(() => kd.linalg.inv(A), (e) => e.code === 'KD_NOT_SUPPORTED');
    kd.autocast({ deviceType: 'cpu' }, () => {
      for (const r of [kd.linalg.inv(A), kd.inverse(A), kd.linalg.cholesky(A), kd.linalg.qr(A).R, kd.linalg.svd(A).S,
        kd.linalg.eigh(A).eigenvalues, kd.linalg.eigvalsh(A)]) assert.equal(r.dtype, 'float32');
    });
  });
});

describe('linalg: the backward ops are callable and validate what they index', function () {
  it('linalgQrBackward and linalgSvdBackward refuse tensors with too few dims (KD_INVALID_ARGUMENT, no out-of-bounds read)', function () {
    const m = kd.ones([2, 2]);
    const cases = [
      () => kd._internal.linalgQrBackward(m, m, kd.ones([2]), m, 'reduced'),
      () => kd._internal.linalgQrBackward(m, m, m, kd.ones([]), 'reduced'),
      () => kd._internal.linalgSvdBackward(m, kd.ones([2]), m, m, kd.ones([]), m, false),
      () => kd._internal.linalgSvdBackward(m, kd.ones([2]), m, kd.ones([2]), kd.ones([2]), m, false),
      () => kd._internal.linalgSvdBackward(m, kd.ones([2]), m, m, kd.ones([2]), kd.ones([2]), true),
    ];
    for (const f of cases) assert.throws(f, (e) => e.code === 'KD_INVALID_ARGUMENT' && /at least \d dimensions/.test(e.message));
  });
});
