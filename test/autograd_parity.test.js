// autograd_parity.test.js - every gradient the fixtures recorded from PyTorch (cases made with
// case(..., grad=True): gradOutputs and expectedGrads), checked against kindling's autograd, and
// gradcheck (float64 finite differences) on the float64 ones. The cases come from every fixture
// family, so a new op's recorded gradients are checked without new test code.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, fixture, buildArg, callOp, values, decode, TOL } = require('./helpers');

// Gradients are sums computed in another order than PyTorch's: a little looser than forward.
const GTOL = { float32: { rtol: 1e-4, atol: 1e-5 }, float64: { rtol: 1e-6, atol: 1e-7 },
  float16: TOL.float16, bfloat16: TOL.bfloat16 };

// Cases where finite differences cannot agree by design: dropout draws a new mask per call;
// embedding's paddingIdx row gets no gradient (PyTorch's definition, not the true derivative).
const NO_GRADCHECK = (c) => c.op === 'nn.functional.dropout' || /paddingIdx/.test(c.name);

const families = fs.readdirSync(path.join(__dirname, 'fixtures')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));

function closeArrays(a, e, dtype, what) {
  const { rtol, atol } = GTOL[dtype] || GTOL.float64;
  assert.equal(a.length, e.length, `${what}: ${a.length} elements, expected ${e.length}`);
  const bad = [];
  for (let i = 0; i < e.length; i++) {
    const x = a[i];
    const y = e[i];
    const ok = Number.isNaN(y) ? Number.isNaN(x) : !Number.isFinite(y) ? x === y : Math.abs(x - y) <= atol + rtol * Math.abs(y);
    if (!ok) bad.push(i);
  }
  if (bad.length) {
    assert.fail(`${what}: ${bad.length}/${e.length} differ: ${bad.slice(0, 4).map((i) => `[${i}] got ${a[i]} expected ${e[i]}`).join('; ')}`);
  }
}

/** Inputs of case c, with the arguments PyTorch differentiated as leaves requiring grad. */
function leafInputs(c) {
  return c.args.map((a, i) => {
    const t = buildArg(a);
    if (c.expectedGrads[i] && t instanceof kd.Tensor) return t.detach().requiresGrad_();
    return t;
  });
}

function gradOf(c, args) {
  const r = callOp(c, args);
  const outs = Array.isArray(r) ? r : [r];
  const os = [];
  const gos = [];
  c.gradOutputs.forEach((g, k) => {
    if (g && outs[k] && outs[k].requiresGrad) { os.push(outs[k]); gos.push(buildArg(g)); }
  });
  const idx = c.expectedGrads.map((g, i) => (g ? i : -1)).filter((i) => i >= 0);
  assert.ok(os.length > 0, 'no output requires grad');
  const gs = kd.autograd.grad(os, idx.map((i) => args[i]), gos, { allowUnused: true });
  return { idx, gs };
}

for (const family of families) {
  const all = fixture(family);
  const cases = (Array.isArray(all) ? all : []).filter((c) => c && c.expectedGrads && !c.error);
  if (!cases.length) continue;
  describe(`gradients vs PyTorch: ${family}`, function () {
    for (const c of cases) {
      it(`${c.op}: ${c.name}`, function () {
        const args = leafInputs(c);
        const { idx, gs } = gradOf(c, args);
        idx.forEach((i, k) => {
          const e = c.expectedGrads[i];
          const g = gs[k];
          if (g === null) {
            assert.ok(e.data.every((v) => decode(v) === 0), `${c.name}: no gradient for arg ${i}, PyTorch has a non-zero one`);
            return;
          }
          assert.deepEqual(g.shape, e.shape, `${c.name}: shape of the gradient of arg ${i}`);
          closeArrays(values(g), e.data.map(decode), e.dtype, `${c.name}: gradient of arg ${i}`);
        });
      });
    }
  });
  const f64 = cases.filter((c) => !NO_GRADCHECK(c) && c.args.every((a, i) => !c.expectedGrads[i] || (a.dtype === 'float64' && a.data.length <= 64)));
  if (!f64.length) continue;
  describe(`gradcheck: ${family}`, function () {
    for (const c of f64) {
      it(`${c.op}: ${c.name}`, function () {
        // finite differences need one memory location per element: expanded inputs are copied
        const args = leafInputs(c).map((t) => (t instanceof kd.Tensor && t.requiresGrad && t.stride().some((s, d) => s === 0 && t.shape[d] > 1)
          ? t.detach().contiguous().requiresGrad_() : t));
        assert.ok(kd.autograd.gradcheck((...xs) => callOp(c, xs), args, { atol: 1e-5, rtol: 1e-3 }));
      });
    }
  });
}
