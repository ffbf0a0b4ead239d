// unary.test.js - unary math and activations against PyTorch (test/fixtures/unary.json): every
// dtype, NaN/Inf, non-contiguous, 0-d and empty inputs, in-place forms, parameters and errors;
// the activation backward kernels (kd._internal.*Backward) against the gradients PyTorch
// recorded in the fixtures; call forms, in-place activations, kd.nn.functional, and large
// inputs (parallel, vectorized paths) against a float64 reference.
'use strict';

const { kd, assert, parityTests, values, fixture, buildArg, assertTensorClose, expectKdError } = require('./helpers');

parityTests('unary', 'unary math and activations (PyTorch fixtures)');

describe('activation backward kernels vs PyTorch gradients', function () {
  const SELU = [1.6732632423543772, 1.0507009873554805];
  const bw = {
    'nn.functional.gelu': (g, x, kw) => kd._internal.geluBackward(g, x, { approximate: (kw && kw.approximate) || 'none' }),
    'nn.functional.silu': (g, x) => kd._internal.siluBackward(g, x),
    'nn.functional.mish': (g, x) => kd._internal.mishBackward(g, x),
    'nn.functional.elu': (g, x, kw) => kd._internal.eluBackward(g, kw && kw.alpha !== undefined ? kw.alpha : 1, 1, 1, false, x),
    'nn.functional.selu': (g, x) => kd._internal.eluBackward(g, SELU[0], SELU[1], 1, false, x),
  };
  for (const c of fixture('unary')) {
    if (!bw[c.op] || !c.expectedGrads || c.form !== 'function') continue;
    it(`${c.op.split('.').pop()}Backward: ${c.name}`, function () {
      const x = buildArg(c.args[0]);
      const g = buildArg(c.gradOutputs[0]);
      assertTensorClose(bw[c.op](g, x, c.kwargs), c.expectedGrads[0], c.name);
    });
  }

  it('eluBackward from the result (in-place elu) matches the one from the input', function () {
    const x = kd.tensor([-3, -1, -0.1, 0, 0.5, 2], { dtype: 'float64' });
    const g = kd.tensor([1, -2, 0.5, 1, 3, -1], { dtype: 'float64' });
    const y = kd.nn.functional.elu(x, 0.7);
    const a = values(kd._internal.eluBackward(g, 0.7, 1, 1, false, x));
    const b = values(kd._internal.eluBackward(g, 0.7, 1, 1, true, y));
    a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) < 1e-12, `${i}: ${v} vs ${b[i]}`));
    expectKdError(() => kd._internal.eluBackward(g, -1, 1, 1, true, y), ['KD_INVALID_ARGUMENT'], 'negative alpha from result');
  });

  it('backward kernels broadcast, promote and refuse integers', function () {
    const x = kd.tensor([[-1], [2]], { dtype: 'float32' });
    const g = kd.tensor([1, 2, 3], { dtype: 'float64' });
    const r = kd._internal.siluBackward(g, x);
    assert.deepEqual(r.shape, [2, 3]);
    assert.equal(r.dtype, 'float64');
    expectKdError(() => kd._internal.siluBackward(kd.ones([2], { dtype: 'int32' }), kd.ones([2], { dtype: 'int32' })),
      ['KD_DTYPE_MISMATCH', 'KD_NOT_SUPPORTED'], 'int silu backward');
    expectKdError(() => kd._internal.geluBackward(g, g, { approximate: 'x' }), ['KD_INVALID_ARGUMENT'], 'bad approximate');
  });
});

describe('unary ops: API details', function () {
  it('activations live in kd and kd.nn.functional, with method forms', function () {
    const F = kd.nn.functional;
    for (const n of ['relu', 'sigmoid', 'tanh', 'gelu', 'silu', 'elu', 'selu', 'leakyRelu', 'relu6', 'hardtanh',
      'hardsigmoid', 'hardswish', 'mish', 'softplus', 'logsigmoid']) {
      assert.equal(typeof kd[n], 'function', `kd.${n}`);
      assert.equal(typeof F[n], 'function', `kd.nn.functional.${n}`);
      assert.equal(typeof kd.Tensor.prototype[n], 'function', `Tensor#${n}`);
    }
  });

  it('positional and options forms of parameters agree', function () {
    const x = kd.tensor([-2, -0.5, 0.5, 2], { dtype: 'float32' });
    assert.deepEqual(values(kd.leakyRelu(x, 0.5)), values(x.leakyRelu({ negativeSlope: 0.5 })));
    assert.deepEqual(values(kd.hardtanh(x, -1, 1)), values(kd.nn.functional.hardtanh(x, { minVal: -1, maxVal: 1 })));
    assert.deepEqual(values(kd.softplus(x, 2, 1)), values(x.softplus({ beta: 2, threshold: 1 })));
    assert.deepEqual(values(kd.round(kd.tensor([1.26]), { decimals: 1 })).map((v) => +v.toFixed(5)), [1.3]);
    assert.deepEqual(values(kd.nanToNum(kd.tensor([NaN, Infinity]), 1, 2)), [1, 2]);
    assert.deepEqual(values(kd.nanToNum(kd.tensor([NaN, -Infinity]), { neginf: -5 })), [0, -5]);
  });

  it('in-place activations write into self, bump the version and match the function form', function () {
    const base = [-3, -1, -0.2, 0, 0.4, 2, 5, 8];
    for (const [n, args] of [['relu6', []], ['leakyRelu', [0.1]], ['elu', [0.5]], ['selu', []], ['silu', []],
      ['mish', []], ['hardtanh', [-0.5, 0.5]], ['hardsigmoid', []], ['hardswish', []], ['sin', []], ['erf', []]]) {
      const x = kd.tensor(base, { dtype: 'float32' });
      const want = values(x[n](...args));
      const v0 = x.version;
      const r = x[`${n}_`](...args);
      assert.equal(r, x, `${n}_ returns self`);
      assert.ok(x.version > v0, `${n}_ bumps the version`);
      assert.deepEqual(values(x), want, `${n}_ values`);
    }
  });

  it('bool and integer results: isnan family, square of bool, floor of int', function () {
    const x = kd.tensor([1, NaN, Infinity, -Infinity], { dtype: 'float16' });
    assert.deepEqual(values(x.isnan()), [false, true, false, false].map(Number).map(Boolean).map((b) => values(kd.tensor([b]))[0]));
    assert.equal(kd.isinf(x).dtype, 'bool');
    assert.equal(kd.square(kd.tensor([true, false])).dtype, 'int64');
    const i = kd.tensor([3, -4], { dtype: 'int16' });
    assert.equal(kd.floor(i).dtype, 'int16');
    assert.deepEqual(values(kd.floor(i)), [3, -4]);
    assert.equal(kd.sin(i).dtype, 'float32');
  });
});

describe('unary ops: large inputs (parallel and vectorized paths) against float64', function () {
  const n = 100003; // not a multiple of the vector width; above the parallel grain
  const xs = new Float64Array(n);
  for (let i = 0; i < n; i++) xs[i] = ((i * 7919) % 20011) / 20011 * 8 - 4; // [-4, 4)
  const erf = (x) => { // Abramowitz-Stegun 7.1.26 is too coarse; use a series/continued fraction
    const t = Math.abs(x);
    let s = 0;
    let term = t;
    for (let k = 0; k < 200; k++) {
      s += term / (2 * k + 1);
      term *= -t * t / (k + 1);
      if (Math.abs(term) < 1e-17) break;
    }
    const r = 2 / Math.sqrt(Math.PI) * s;
    return x < 0 ? -r : r;
  };
  const refs = {
    sin: Math.sin, cos: Math.cos, tan: Math.tan, atan: Math.atan, sinh: Math.sinh, cosh: Math.cosh,
    asinh: Math.asinh, exp2: (x) => 2 ** x, expm1: Math.expm1, erf,
    silu: (x) => x / (1 + Math.exp(-x)), gelu: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)),
    mish: (x) => x * Math.tanh(Math.log1p(Math.exp(x))), logsigmoid: (x) => -Math.log1p(Math.exp(-x)),
    softplus: (x) => Math.log1p(Math.exp(x)), sigmoid: (x) => 1 / (1 + Math.exp(-x)), tanh: Math.tanh,
    elu: (x) => (x > 0 ? x : Math.expm1(x)), hardswish: (x) => x * Math.min(Math.max(x + 3, 0), 6) / 6,
  };
  for (const dtype of ['float32', 'float64']) {
    for (const [op, ref] of Object.entries(refs)) {
      it(`${op} ${dtype}: contiguous and transposed`, function () {
        const x = kd.tensor(Array.from(xs), { dtype });
        const y = values(kd[op](x));
        const xv = values(x);
        // (the erf series loses ~1e-9 to cancellation near |x| = 4)
        const tol = dtype === 'float32' ? 2e-6 : (op === 'erf' || op === 'gelu' ? 1e-8 : 1e-12);
        for (let i = 0; i < n; i += 7) {
          const e = ref(xv[i]);
          assert.ok(Math.abs(y[i] - e) <= tol * (1 + Math.abs(e)), `${op}[${i}](${xv[i]}) = ${y[i]}, expected ${e}`);
        }
        // non-contiguous: a transposed 2-D view gives the same values
        const m = kd.tensor(Array.from(xs.subarray(0, 300 * 200)), { dtype }).reshape([300, 200]);
        const t = values(kd[op](m.t()).t().contiguous());
        const c = values(kd[op](m));
        // (the scalar libm of the strided path and the vector libm of the flat one may differ by ulps)
        for (let i = 0; i < c.length; i++) {
          assert.ok(Math.abs(t[i] - c[i]) <= tol * (1 + Math.abs(c[i])), `${op} transposed [${i}]: ${t[i]} vs ${c[i]}`);
        }
      });
    }
  }
});
