// cuda_parity.test.js - the backend parity suite (after ggml's test-backend-ops): every fixture
// case of test/fixtures/*.json run on CUDA and compared with the same case run on the CPU.
// Inputs are built on the CPU, their contiguous base moved to the GPU and the case's views
// applied there, so non-contiguous inputs stay non-contiguous on the device. Per case:
//   - the CPU raises: CUDA must raise the same error code and message;
//   - else the CUDA result (and, in place, self and its base) must match the CPU's within the
//     tolerance table below (looser for float16/bfloat16, exact for integers and bool);
//   - an op or dtype without a CUDA kernel (KD_NOT_SUPPORTED) is reported as pending, with the
//     reason, so the suite doubles as the coverage list of the CUDA backend;
//   - cases with recorded gradients (expectedGrads) also compare autograd on CUDA with the CPU;
//   - cases marked signAmbiguous (SVD, eigh) compare |values|, and not their sign-dependent gradients.
// Factory cases (no tensor input) are left to the factory tests. Skipped, with the reason
// printed, when kd.cuda.isAvailable() is false.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, fixture, isTensorSpec, buildContiguous, applyView, callOp, values, decode, deviceSyncPoint } = require('./helpers');

const absAll = (r) => (Array.isArray(r) ? r.map((t) => t.abs()) : r.abs());

// |cuda - cpu| <= atol + rtol * |cpu|. GPU libm differs from glibc's by a few ulp, and sums run
// in another order: looser than the PyTorch fixtures' tolerances.
const CTOL = {
  float32: { rtol: 1e-5, atol: 1e-5 },
  float64: { rtol: 1e-9, atol: 1e-10 },
  float16: { rtol: 1e-2, atol: 1e-3 },
  bfloat16: { rtol: 4e-2, atol: 1e-2 },
};
const GTOL = { float32: { rtol: 1e-4, atol: 1e-5 }, float64: { rtol: 1e-7, atol: 1e-9 }, float16: CTOL.float16, bfloat16: CTOL.bfloat16 };

const available = kd.cuda.isAvailable();
const families = fs.readdirSync(path.join(__dirname, 'fixtures')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));

/** A fixture tensor spec built on `device` (views applied there); returns { base, t }. */
function buildOn(spec, device) {
  let base = buildContiguous(spec);
  if (device !== 'cpu') base = base.to(device);
  let t = base;
  for (const v of spec.views || []) t = applyView(t, v);
  return { base, t };
}

function buildArgOn(a, device) {
  if (a !== null && typeof a === 'object' && !Array.isArray(a) && 'scalar' in a) return { t: decode(a.scalar) };
  if (isTensorSpec(a)) return buildOn(a, device);
  if (Array.isArray(a) && a.length && a.some(isTensorSpec) && a.every((x) => x === null || isTensorSpec(x))) {
    return { t: a.map((x) => (x === null ? null : buildOn(x, device).t)) };
  }
  return { t: a };
}

const hasTensorInput = (c) => c.args.some((a) => isTensorSpec(a) || (Array.isArray(a) && a.some(isTensorSpec)));

// Ops whose PyTorch default differs by device: the CPU side runs with the CUDA default, so the
// two compute the same thing; cases that default leaves undefined are pending. linalg.lstsq:
// driver gelsy on the CPU (rank, no residuals), gels on CUDA (residuals, no rank), which assumes
// full rank: its result for a rank-deficient matrix is undefined (on PyTorch's CUDA too).
const CUDA_DEFAULT_KWARGS = { 'linalg.lstsq': { driver: 'gels' } };
// gridSample: PyTorch's CUDA kernel takes float16, its CPU kernel refuses it (tested in
// test/grid_sample.test.js on the GPU).
const UNDEFINED_ON_CUDA = { 'linalg.lstsq': ['lstsq rank deficient'], 'nn.functional.gridSample': ['error float16 (no CPU kernel)'] };
function run(c, device, leaves) {
  const built = c.args.map((a) => buildArgOn(a, device));
  let args = built.map((b) => b.t);
  if (leaves) args = args.map((t, i) => (c.expectedGrads[i] && t instanceof kd.Tensor ? t.detach().requiresGrad_() : t));
  if (device === 'cpu' && CUDA_DEFAULT_KWARGS[c.op]) c = { ...c, kwargs: { ...CUDA_DEFAULT_KWARGS[c.op], ...c.kwargs } };
  try {
    const r = callOp(c, args, (a) => buildArgOn(a, device).t);
    if (device === 'cuda') deviceSyncPoint(r);
    return { built, args, r, err: null };
  } catch (err) {
    return { built, args, r: null, err };
  }
}

function isNotSupported(err) {
  return err && (err.code === 'KD_NOT_SUPPORTED' || /no kernel is registered|not implemented on CUDA/.test(err.message));
}

function closeTensors(cu, cpu, what, tol) {
  assert.ok(cu instanceof kd.Tensor, `${what}: CUDA returned ${cu}`);
  assert.equal(cu.device.type === undefined ? String(cu.device).startsWith('cuda') : cu.device.type === 'cuda', true,
    `${what}: the result is on ${cu.device}, not on CUDA`);
  assert.deepEqual(cu.shape, cpu.shape, `${what}: shape`);
  assert.equal(cu.dtype, cpu.dtype, `${what}: dtype`);
  const a = values(cu.cpu());
  const e = values(cpu);
  const t = tol[cpu.dtype];
  const bad = [];
  for (let i = 0; i < e.length; i++) {
    const x = Number(a[i]);
    const y = Number(e[i]);
    const ok = !t ? a[i] === e[i]
      : Number.isNaN(y) ? Number.isNaN(x) : !Number.isFinite(y) ? x === y : Math.abs(x - y) <= t.atol + t.rtol * Math.abs(y);
    if (!ok) bad.push(i);
  }
  if (bad.length) {
    assert.fail(`${what}: ${bad.length}/${e.length} differ: ${bad.slice(0, 4).map((i) => `[${i}] cuda ${a[i]} cpu ${e[i]}`).join('; ')}`);
  }
}

function compareResults(cu, cpu, what, tol) {
  if (Array.isArray(cpu)) {
    assert.ok(Array.isArray(cu), `${what}: expected a tuple`);
    assert.equal(cu.length, cpu.length, `${what}: tuple length`);
    cpu.forEach((x, i) => compareResults(cu[i], x, `${what} [${i}]`, tol));
    return;
  }
  if (cpu instanceof kd.Tensor) closeTensors(cu, cpu, what, tol);
  else assert.deepEqual(cu, cpu, what);
}

describe('CUDA backend parity (every fixture case, CUDA vs CPU)', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () {
      console.log(`    (cuda_parity skipped: ${kd.cuda.unavailableReason() || 'kd.cuda.isAvailable() is false'})`);
      this.skip();
    });
    return;
  }
  for (const family of families) {
    const all = fixture(family);
    const cases = (Array.isArray(all) ? all : []).filter((c) => c && c.op && Array.isArray(c.args) && hasTensorInput(c));
    if (!cases.length) continue;
    describe(family, function () {
      for (const c of cases) {
        const title = `${c.op}: ${c.name}${c.form && c.form !== 'function' ? ` [${c.form}]` : ''}`;
        it(title, function () {
          if ((UNDEFINED_ON_CUDA[c.op] || []).includes(c.name)) this.skip();
          const cpu = run(c, 'cpu', false);
          const cu = run(c, 'cuda', false);
          if (cu.err && isNotSupported(cu.err)) this.skip();
          if (cpu.err) {
            assert.ok(cu.err, `${c.name}: the CPU raises "${cpu.err.message}", CUDA returned a result`);
            assert.equal(cu.err.code, cpu.err.code, `${c.name}: error code`);
            assert.equal(cu.err.message, cpu.err.message, `${c.name}: error message`);
            return;
          }
          if (cu.err) throw cu.err;
          if (/random|dropout|rand/i.test(c.op)) return; // values differ by design until the Philox mapping lands
          // singular vectors / eigenvectors: defined up to sign, which another library may flip
          if (c.signAmbiguous) return compareResults(absAll(cu.r), absAll(cpu.r), c.name, CTOL);
          compareResults(cu.r, cpu.r, c.name, CTOL);
          if (c.form === 'inplace') {
            closeTensors(cu.args[0], cpu.args[0], `${c.name}: self`, CTOL);
            closeTensors(cu.built[0].base, cpu.built[0].base, `${c.name}: base of self`, CTOL);
          }
        });
        if (c.expectedGrads && !c.error) {
          it(`${title} (gradients)`, function () {
            const grads = (device) => {
              const { args, r, err } = run(c, device, true);
              if (err) return { err };
              const outs = Array.isArray(r) ? r : [r];
              const os = [];
              const gos = [];
              c.gradOutputs.forEach((g, k) => {
                if (g && outs[k] && outs[k].requiresGrad) { os.push(outs[k]); gos.push(buildOn(g, device).t); }
              });
              const idx = c.expectedGrads.map((g, i) => (g ? i : -1)).filter((i) => i >= 0);
              try {
                return { gs: kd.autograd.grad(os, idx.map((i) => args[i]), gos, { allowUnused: true }) };
              } catch (e) {
                return { err: e };
              }
            };
            const cpu = grads('cpu');
            const cu = grads('cuda');
            if (cu.err && isNotSupported(cu.err)) this.skip();
            if (cpu.err) throw cpu.err;
            if (cu.err) throw cu.err;
            if (/random|dropout|rand/i.test(c.op)) return;
            if (c.signAmbiguous) return; // a loss of sign-ambiguous outputs: test/linalg_decomp_cuda.test.js
            cpu.gs.forEach((g, k) => {
              if (g === null) assert.equal(cu.gs[k], null, `${c.name}: gradient ${k} is null on the CPU only`);
              else closeTensors(cu.gs[k], g, `${c.name}: gradient ${k}`, GTOL);
            });
          });
        }
      }
    });
  }
});

// Sorting, convolution and pooling (cuda/ops_sort.cu, ops_conv.cu, ops_pool.cu) on inputs larger
// than the fixtures': many rows (segmented sorts), one long row (radix sort), duplicates (stability,
// unique), NaN (median), grouped/strided/dilated convolutions, chunked im2col, every dtype the CPU
// kernel takes, a non-contiguous input, and the gradients of the differentiable ones.
describe('CUDA sorting, convolution and pooling on larger inputs (CUDA vs CPU)', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () {
      this.skip();
    });
    return;
  }
  const F = kd.nn.functional;
  const ALL = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'];
  const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'];
  const isFloat = (dt) => FLOATS.includes(dt);

  /** A CPU input: floats from randn, integers from a small range (many ties), bool. */
  function input(shape, dtype, seed, { nan = false, low = -6, high = 6 } = {}) {
    kd.manualSeed(seed);
    let t;
    if (dtype === 'bool') t = kd.randn(shape).gt(0);
    else if (isFloat(dtype)) t = kd.randn(shape, { dtype });
    else t = kd.randint(dtype === 'uint8' ? 0 : low, high, shape, { dtype });
    if (nan) {
      const m = kd.randn(shape).gt(1.5);
      t = kd.where(m, kd.full([], NaN, { dtype }), t);
    }
    return t;
  }

  /** Runs fn on the CPU inputs and on their CUDA copies; compares results and (grad) gradients. */
  function check(name, inputs, fn, grad) {
    it(name, function () {
      const cpuIn = inputs();
      const cuIn = cpuIn.map((t) => (t instanceof kd.Tensor ? t.to('cuda') : t));
      compareResults(fn(...cuIn), fn(...cpuIn), name, CTOL);
      if (!grad) return;
      const grads = (ins) => {
        const leaves = ins.map((t) => (t instanceof kd.Tensor && isFloat(t.dtype) ? t.detach().requiresGrad_() : t));
        const r = fn(...leaves);
        const out = Array.isArray(r) ? r[0] : r;
        kd.manualSeed(99);
        const go = kd.randn(out.shape, { dtype: out.dtype }).to(out.device);
        const xs = leaves.filter((t) => t instanceof kd.Tensor && t.requiresGrad);
        return kd.autograd.grad([out], xs, [go], { allowUnused: true });
      };
      const gc = grads(cpuIn);
      const gu = grads(cuIn);
      gc.forEach((g, k) => {
        if (g === null) assert.equal(gu[k], null, `${name}: gradient ${k}`);
        else closeTensors(gu[k], g, `${name}: gradient ${k}`, GTOL);
      });
    });
  }

  for (const dt of ALL) {
    const g = isFloat(dt);
    check(`sort rows ${dt} (segmented)`, () => [input([300, 129], dt, 1)], (x) => kd.sort(x, 1), g);
    check(`sort one long row descending ${dt}`, () => [input([70000], dt, 2)], (x) => kd.sort(x, 0, true), g);
    check(`argsort dim 0 of a transposed view ${dt}`, () => [input([64, 48], dt, 3).transpose(0, 1)], (x) => kd.argsort(x, 0));
    check(`unique with inverse and counts ${dt}`, () => [input([40, 50], dt, 4)],
      (x) => kd.unique(x, { returnInverse: true, returnCounts: true }));
    check(`unique dim 0 ${dt}`, () => [input([300, 3], dt, 5, { low: 0, high: 3 })],
      (x) => kd.unique(x, { returnInverse: true, returnCounts: true, dim: 0 }));
    check(`unique dim 1 of a transposed view ${dt}`, () => [input([200, 2], dt, 6, { low: 0, high: 2 }).transpose(0, 1)],
      (x) => kd.unique(x, { returnInverse: true, returnCounts: true, dim: 1 }));
    if (dt === 'bool') continue;
    check(`topk largest ${dt}`, () => [input([50, 300], dt, 7)], (x) => kd.topk(x, 9, 1), g);
    check(`topk smallest along dim 0 ${dt}`, () => [input([300, 20], dt, 8)], (x) => kd.topk(x, 4, 0, false), g);
    check(`median ${dt}`, () => [input([31, 17], dt, 9, { nan: false })], (x) => kd.median(x), g);
    check(`median.dim ${dt}`, () => [input([40, 33], dt, 10).transpose(0, 1)], (x) => kd.median(x, 0), g);
    if (isFloat(dt)) {
      check(`median.dim with NaN ${dt}`, () => [input([60, 25], dt, 11, { nan: true })], (x) => kd.median(x, 1, true));
      check(`median with NaN ${dt}`, () => [input([300], dt, 12, { nan: true })], (x) => kd.median(x));
    }
  }

  for (const dt of FLOATS) {
    const g = true;
    check(`conv2d groups, stride, padding, dilation, bias ${dt}`,
      () => [input([3, 6, 17, 15], dt, 20), input([8, 3, 3, 3], dt, 21), input([8], dt, 22)],
      (x, w, b) => F.conv2d(x, w, b, [2, 1], [1, 2], [1, 2], 2), g);
    check(`conv2d 1x1 (direct) of a non-contiguous input ${dt}`,
      () => [input([2, 9, 7, 4], dt, 23).transpose(2, 3), input([9, 5, 1, 1], dt, 24).transpose(0, 1)],
      (x, w) => F.conv2d(x, w), g);
    check(`conv2d padding same ${dt}`, () => [input([2, 3, 10, 9], dt, 25), input([4, 3, 4, 3], dt, 26)],
      (x, w) => F.conv2d(x, w, null, 1, 'same', [2, 1]), g);
    check(`conv1d ${dt}`, () => [input([4, 6, 40], dt, 27), input([6, 2, 5], dt, 28), input([6], dt, 29)],
      (x, w, b) => F.conv1d(x, w, b, 3, 2, 1, 3), g);
    check(`convTranspose2d output padding, groups ${dt}`,
      () => [input([2, 4, 6, 5], dt, 30), input([4, 3, 3, 2], dt, 31), input([6], dt, 32)],
      (x, w, b) => F.convTranspose2d(x, w, b, [2, 3], [1, 0], [1, 2], 2, 1), g);
    check(`maxPool2d with indices, ceil mode, dilation ${dt}`, () => [input([3, 4, 23, 19], dt, 33)],
      (x) => F.maxPool2d(x, [3, 2], [2, 2], [1, 1], [2, 1], true, true), g);
    check(`avgPool2d no pad count, divisor ${dt}`, () => [input([2, 5, 21, 18], dt, 34).transpose(2, 3)],
      (x) => F.avgPool2d(x, 3, 2, 1, true, false), g);
    check(`avgPool2d divisorOverride ${dt}`, () => [input([2, 5, 12, 12], dt, 35)], (x) => F.avgPool2d(x, 4, 3, 2, false, true, 5), g);
    check(`adaptiveAvgPool2d ${dt}`, () => [input([3, 4, 23, 17], dt, 36)], (x) => F.adaptiveAvgPool2d(x, [5, 7]), g);
  }
});

// Factories have no tensor input, so the fixture loop above leaves them out: arange and linspace
// on CUDA against the CPU, for every dtype each supports, with PyTorch's size rules and errors.
describe('CUDA factories (arange, linspace) vs CPU', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }
  const DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64'];
  const cases = [
    ['arange', [5], {}], ['arange', [0, 1, 0.1], {}], ['arange', [-3, 7, 2], {}], ['arange', [10, 0, -1.5], {}],
    ['arange', [0], {}], ['linspace', [0, 1, 7], {}], ['linspace', [-5, 5, 11], {}], ['linspace', [3, 3, 1], {}],
    ['linspace', [0, 10, 0], {}], ['linspace', [0, 4096, 32769], {}], ['arange', [0, 40000, 1], {}],
  ];
  for (const [name, args, opts] of cases) {
    for (const dtype of DTYPES) {
      it(`${name}(${args.join(', ')}) ${dtype}`, function () {
        const call = (device) => {
          try {
            return { r: kd[name](...args, { ...opts, dtype, device }) };
          } catch (err) {
            return { err };
          }
        };
        const cpu = call('cpu');
        const cu = call('cuda');
        if (cpu.err) {
          assert.ok(cu.err, `the CPU raises "${cpu.err.message}", CUDA returned a result`);
          assert.equal(cu.err.message, cpu.err.message);
          return;
        }
        if (cu.err) throw cu.err;
        closeTensors(cu.r, cpu.r, `${name} ${dtype}`, CTOL);
      });
    }
  }
});

// Empty batches reach the CUDA convolution and nllLoss kernels with operands that have no memory
// (an empty tensor's data pointer is NULL): they must give the CPU's empty results and gradients.
describe('CUDA convolution and nllLoss on empty batches (CUDA vs CPU)', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }
  const F = kd.nn.functional;

  /** fn on CPU inputs and on their CUDA copies: results, then the gradients of the float inputs. */
  function check(name, inputs, fn) {
    it(name, function () {
      const run = (device) => {
        const ins = inputs().map((t) => {
          const d = t.to(device);
          return t.dtype.startsWith('float') ? d.requiresGrad_() : d;
        });
        const out = fn(...ins);
        kd.manualSeed(5);
        const go = kd.randn(out.shape, { dtype: out.dtype }).to(device);
        const xs = ins.filter((t) => t.requiresGrad);
        return { out, grads: kd.autograd.grad([out], xs, [go], { allowUnused: true }) };
      };
      const cpu = run('cpu');
      const cu = run('cuda');
      closeTensors(cu.out.detach(), cpu.out.detach(), `${name}: result`, CTOL);
      cpu.grads.forEach((g, k) => closeTensors(cu.grads[k], g, `${name}: gradient ${k}`, GTOL));
    });
  }
  const randn = (...shape) => () => { kd.manualSeed(shape.length); return kd.randn(shape); };
  const inputs = (...makers) => () => makers.map((m) => m());

  check('conv2d of an empty batch', inputs(randn(0, 3, 6, 5), randn(4, 3, 3, 2)), (x, w) => F.conv2d(x, w, null, 1, 1));
  check('conv2d 1x1 (direct) of an empty batch', inputs(randn(0, 3, 6, 5), randn(4, 3, 1, 1)), (x, w) => F.conv2d(x, w));
  check('conv2d of an empty batch with a bias (values)', inputs(randn(0, 4, 5, 5), randn(6, 2, 3, 3)),
    (x, w) => F.conv2d(x, w, kd.ones([6]).to(x.device), 1, 0, 1, 2));
  check('conv1d of an empty batch', inputs(randn(0, 2, 9), randn(3, 2, 4)), (x, w) => F.conv1d(x, w, null, 2));
  check('convTranspose2d of an empty batch', inputs(randn(0, 3, 4, 4), randn(3, 2, 3, 3)),
    (x, w) => F.convTranspose2d(x, w, null, 2, 1, 1));
  check('conv2d with no input channels', inputs(randn(2, 0, 5, 5), randn(3, 0, 3, 3)), (x, w) => F.conv2d(x, w));
  const target = () => kd.zeros([0], { dtype: 'int64' });
  check("nllLoss of an empty batch, reduction 'none'", inputs(randn(0, 5), target),
    (x, t) => F.nllLoss(x, t, { reduction: 'none' }));
  check("nllLoss of an empty 2-D batch with weights, reduction 'none'",
    inputs(randn(0, 4, 3), () => kd.zeros([0, 3], { dtype: 'int64' })),
    (x, t) => F.nllLoss(x, t, { weight: kd.ones([4]).to(x.device), reduction: 'none' }));
});

// Tensor#index and Tensor#indexPut_ (lib/indexing.js) make index tensors from JS arrays and values
// from numbers: on the indexed tensor's device. CPU index tensors and 0-d CPU values are moved to
// it, as PyTorch's indexing does.
describe('CUDA Tensor#index and indexPut_ with JS keys and values (CUDA vs CPU)', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }
  const base = () => kd.arange(24, { dtype: 'float32' }).reshape([2, 3, 4]);
  const cases = [
    ['index with a JS integer array', (x) => x.index([[1, 0, 1]])],
    ['index with a JS bool array after a slice', (x) => x.index([kd.slice(), [true, false, true]])],
    ['index with two JS arrays around a full slice', (x) => x.index([[0, 1], kd.slice(), [3, -1]])],
    ['index with a CPU int64 tensor', (x) => x.index([kd.slice(), kd.tensor([2, 0])])],
    ['index with a CPU int32 tensor and an integer', (x) => x.index([1, kd.tensor([2, 0], { dtype: 'int32' })])],
    ['index with a CPU bool mask tensor', (x) => x.index([kd.tensor([[true, false, true], [false, true, false]])])],
    ['indexPut_ a number at a JS array', (x) => x.clone().indexPut_([kd.slice(), [0, 2]], 5)],
    ['indexPut_ a JS array at three JS arrays', (x) => x.clone().indexPut_([[0, 1], [2, 2], [3, 0]], [7, 8])],
    ['indexPut_ accumulates a number at repeated positions', (x) => x.clone().indexPut_([[0, 0, 1]], 1.5, true)],
    ['indexPut_ a 0-d CPU tensor at a CPU index tensor', (x) => x.clone().indexPut_([kd.tensor([1])], kd.tensor(-2))],
    ['indexPut_ a number with a basic key', (x) => x.clone().indexPut_([1, kd.slice(0, 2)], 9)],
    ['indexPut_ accumulates a number with a basic key', (x) => x.clone().indexPut_([0], 2, true)],
  ];
  for (const [name, fn] of cases) {
    it(name, function () {
      const cpu = fn(base());
      const cu = fn(base().to('cuda'));
      closeTensors(cu, cpu, name, CTOL);
    });
  }
  it('a CUDA index tensor still cannot index a CPU tensor', function () {
    assert.throws(() => base().index([kd.tensor([0]).to('cuda')]), (e) => e.code === 'KD_DEVICE_MISMATCH');
  });
});

// The gradients of the index-writing backward formulas (scatter, scatterAdd, indexAdd, indexPut
// into zeros made on the op's device) checked on CUDA by finite differences, first and second
// order (gradgradcheck's random gradient outputs are made on the outputs' device).
describe('CUDA gradcheck and gradgradcheck of sorting and indexing ops', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }
  const x = () => {
    kd.manualSeed(3);
    return kd.randn([3, 5], { dtype: 'float64' }).to('cuda').requiresGrad_();
  };
  const idx = (data) => kd.tensor(data).to('cuda');
  const fns = [
    ['sort', (a) => kd.sort(a, 1).values],
    ['topk', (a) => kd.topk(a, 2, 0).values],
    ['max.dim', (a) => kd.max(a, 1).values],
    ['median.dim', (a) => kd.median(a, 0, true).values],
    ['cummax', (a) => kd.cummax(a, 1).values],
    ['gather', (a) => kd.gather(a, 1, idx([[0, 4], [2, 2], [1, 3]]))],
    ['indexSelect', (a) => kd.indexSelect(a, 1, idx([4, 0, 4]))],
    ['take', (a) => kd.take(a, idx([0, 7, 14, 7]))],
    ['index', (a) => a.index([[2, 0], kd.slice(1, 4)])],
  ];
  for (const [name, fn] of fns) {
    it(name, function () {
      assert.equal(kd.autograd.gradcheck(fn, [x()]), true);
      assert.equal(kd.autograd.gradgradcheck(fn, [x()]), true);
    });
  }
});

// Edge extents the fixtures leave out: empty tensors (no storage, so the device entries get NULL
// pointers) reaching the reduction, row, loss and convolution kernels, the float64 accumulation
// of half inputs on the long-run (split) path, and thresholdBackward's threshold on integers.
describe('CUDA empty tensors and reduction accumulators vs CPU', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }
  const F = kd.nn.functional;
  const input = (shape, dtype, seed) => {
    kd.manualSeed(seed);
    return kd.randn(shape).to(dtype);
  };
  // fn(...tensors) on the CPU and on CUDA (same values); results, and with grads the gradients
  // of every input that requires grad, compared.
  const check = (name, make, fn, grads = false) => it(name, function () {
    const run = (device) => {
      const ins = make().map((t) => {
        const d = t.to(device);
        return grads && d.dtype.startsWith('float') ? d.detach().requiresGrad_() : d;
      });
      const out = fn(...ins);
      const outs = Array.isArray(out) ? out : [out];
      if (!grads) return outs;
      outs[0].sum().backward();
      return [...outs, ...ins.filter((t) => t.requiresGrad).map((t) => t.grad)];
    };
    const cpu = run('cpu');
    const cu = run('cuda');
    assert.equal(cu.length, cpu.length);
    cpu.forEach((c, i) => closeTensors(cu[i], c, `${name} [${i}]`, CTOL));
  });

  check('layer norm statistics of empty rows (NaN)', () => [input([3, 0], 'float32', 1)],
    (x) => kd._internal.nativeLayerNorm(x, [0], null, null, 1e-5));
  check('layer norm statistics of empty rows float64, 3-D', () => [input([2, 3, 0], 'float64', 2)],
    (x) => kd._internal.nativeLayerNorm(x, [0], null, null, 1e-5));
  check('conv2d of an empty batch: weight and bias gradients are zeros',
    () => [input([0, 2, 5, 5], 'float32', 3), input([3, 2, 3, 3], 'float32', 4), input([3], 'float32', 5)],
    (x, w, b) => F.conv2d(x, w, b, 1, 1), true);
  check('conv1d of an empty batch float64, gradients',
    () => [input([0, 4, 9], 'float64', 6), input([2, 4, 3], 'float64', 7)], (x, w) => F.conv1d(x, w), true);
  check('crossEntropy of an empty batch, gradient', () => [input([0, 4], 'float32', 8), kd.zeros([0], { dtype: 'int64' })],
    (x, t) => F.crossEntropy(x, t), true);
  check('nllLoss of an empty batch, reduction sum', () => [input([0, 3], 'float64', 9), kd.zeros([0], { dtype: 'int64' })],
    (x, t) => F.nllLoss(x, t, null, -100, 'sum'), true);
  for (const [what, fn] of [
    ['sum keepdim', (x) => x.sum([0], true)], ['prod', (x) => x.prod()], ['mean', (x) => x.mean([0])],
    ['var correction 0', (x) => x.var([0], { correction: 0 })], ['norm p=3', (x) => x.norm(3, [0])],
    ['norm p=1', (x) => x.norm(1)], ['logsumexp keepdim', (x) => x.logsumexp([0], true)],
    ['nansum', (x) => x.nansum([0])], ['countNonzero', (x) => x.countNonzero([0])],
    ['stdMean', (x) => x.stdMean([0])], ['cumsum', (x) => x.cumsum(0)], ['softmax', (x) => x.softmax(0)],
  ]) {
    check(`${what} of an empty [0, 5] input`, () => [input([0, 5], 'float32', 10)], fn);
  }
  for (const dtype of ['float16', 'bfloat16']) {
    check(`sum and mean of a long ${dtype} row into float64 (split path, double accumulators)`,
      () => [input([3, 1 << 16], dtype, 11)], (x) => [x.sum({ dtype: 'float64' }), x.mean([1], { dtype: 'float64' })]);
  }
  // The CPU kernel's vertical loop (a contiguous input reduced over a middle dim) must not run
  // for CUDA tensors: it would read device memory from the host, out of stream order (on a GPU, a
  // crash). The input is written by a kernel queued behind a slow one, so a host read sees stale
  // memory.
  for (const op of ['max', 'min', 'argmax', 'argmin']) {
    it(`${op}(1) of a contiguous [4, 64, 32] CUDA input runs on the stream`, function () {
      const x = input([4, 64, 32], 'float32', 12);
      const g = x.cuda();
      kd.cuda._spin(100);
      const cu = g.mul(2)[op](1); // the product and the reduction queue behind the spin
      const cpu = x.mul(2)[op](1);
      compareResults(cu, cpu, op, CTOL);
    });
  }
  for (const dtype of ['int32', 'int8', 'uint8', 'int64']) {
    check(`thresholdBackward ${dtype} with a fractional threshold`,
      () => [kd.arange(-6, 6).to(dtype), kd.arange(6, -6, -1).to(dtype)],
      (g, x) => kd._internal.thresholdBackward(g, x, 2.5));
  }
});
