// cuda_parity.test.js - the backend parity suite (after ggml's test-backend-ops): every fixture
// case of test/fixtures/*.json run on CUDA and compared with the same case run on the CPU.
// Inputs are built on the CPU, their contiguous base moved to the GPU and the case's views
// applied there, so non-contiguous inputs stay non-contiguous on the device. Per case:
//   - the CPU raises: CUDA must raise the same error code and message;
//   - else the CUDA result (and, in place, self and its base) must match the CPU's within the
//     tolerance table below (looser for float16/bfloat16, exact for integers and bool);
//   - an op or dtype without a CUDA kernel (KD_NOT_SUPPORTED) is reported as pending, with the
//     reason, so the suite doubles as the coverage list of the CUDA backend;
//   - cases with recorded gradients (expectedGrads) also compare autograd on CUDA with the CPU.
// Factory cases (no tensor input) are left to the factory tests. Skipped, with the reason
// printed, when kd.cuda.isAvailable() is false.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, fixture, isTensorSpec, buildContiguous, applyView, callOp, values, decode } = require('./helpers');

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

function run(c, device, leaves) {
  const built = c.args.map((a) => buildArgOn(a, device));
  let args = built.map((b) => b.t);
  if (leaves) args = args.map((t, i) => (c.expectedGrads[i] && t instanceof kd.Tensor ? t.detach().requiresGrad_() : t));
  try {
    return { built, args, r: callOp(c, args), err: null };
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
