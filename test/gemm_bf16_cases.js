// gemm_bf16_cases.js - bfloat16 matrix products (and their gradients) of many shapes and layouts
// checked against the float64 product of the same bfloat16 inputs, whichever kernel runs them
// (kd.build.bf16Gemm: AMX tiles, AVX512-BF16 dot products, or float32). Used by
// test/gemm_bf16.test.js in its own process and, run as a script, in child processes with
// KINDLING_AMX / KINDLING_CPU_CAPABILITY set: prints one JSON line {kernel, cases, failures}.
'use strict';

const kd = require('..');

// Deterministic inputs: values in [-2, 2) from a linear congruential sequence, as bfloat16.
function filled(shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = -2 + (4 * s) / 4294967296;
  }
  return kd.tensor(v, { dtype: 'bfloat16' }).reshape(shape);
}

/** The float64 values and shape of a tensor of any layout (contiguous copy of its values). */
const f64 = (t) => ({ shape: t.shape, v: Float64Array.from(t.to('float64').contiguous().dataSync()) });

// C (batch x m x n) = A @ B for 3-d (or 2-d) operands given as f64(), with sum |a||b| per entry.
function reference(A, B) {
  const d3 = (x) => (x.shape.length === 2 ? [1, ...x.shape] : x.shape);
  const [ba, m, k] = d3(A), [bb, , n] = d3(B);
  const batch = Math.max(ba, bb);
  const c = new Float64Array(batch * m * n), mag = new Float64Array(batch * m * n);
  for (let b = 0; b < batch; b++) {
    const ao = (ba === 1 ? 0 : b) * m * k, bo = (bb === 1 ? 0 : b) * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0, g = 0;
        for (let q = 0; q < k; q++) {
          const p = A.v[ao + i * k + q] * B.v[bo + q * n + j];
          s += p;
          g += Math.abs(p);
        }
        c[(b * m + i) * n + j] = s;
        mag[(b * m + i) * n + j] = g;
      }
    }
  }
  return { c, mag, k };
}

// One rounding to bfloat16 (half an ulp: 2^-8 relative at most) after float32 accumulation of k
// products (a few float32 ulps of sum |a||b| per sqrt(k), the random-walk growth, with headroom).
function check(what, got, ref, failures) {
  const g = f64(got).v;
  if (g.length !== ref.c.length) return failures.push(`${what}: ${g.length} values, expected ${ref.c.length}`);
  const acc = 2 ** -24 * 4 * (Math.sqrt(ref.k) + 1);
  for (let i = 0; i < g.length; i++) {
    const e = ref.c[i], tol = 2 ** -8 * Math.abs(e) + acc * ref.mag[i];
    if (!(Math.abs(g[i] - e) <= tol)) return failures.push(`${what}[${i}] = ${g[i]}, expected ${e} (tolerance ${tol})`);
  }
  return undefined;
}

// [name, A, B]: shapes from 1x1 up, odd m/n/k, k not a multiple of 32, batches (broadcast too),
// transposed, strided and sliced views; most reach the bfloat16 kernel (>= 32^3 multiply-adds).
function cases() {
  const t = (shape, seed) => filled(shape, seed);
  return [
    ['1x1 @ 1x1', t([1, 1], 1), t([1, 1], 2)],
    ['1x40000 @ 40000x1', t([1, 40000], 3), t([40000, 1], 4)],
    ['1025x1 @ 1x33 (k = 1)', t([1025, 1], 5), t([1, 33], 6)],
    ['37x61 @ 61x45', t([37, 61], 7), t([61, 45], 8)],
    ['31x33 @ 33x35', t([31, 33], 9), t([33, 35], 10)],
    ['64x64 @ 64x64', t([64, 64], 11), t([64, 64], 12)],
    ['129x257 @ 257x65', t([129, 257], 13), t([257, 65], 14)],
    ['100x96 @ 96x150', t([100, 96], 15), t([96, 150], 16)],
    ['17x1000 @ 1000x5', t([17, 1000], 17), t([1000, 5], 18)],
    ['3x40x50 @ 3x50x60 (bmm)', t([3, 40, 50], 19), t([3, 50, 60], 20)],
    ['2x33x71 @ 71x34 (broadcast B)', t([2, 33, 71], 21), t([71, 34], 22)],
    ['A transposed 70x45', t([45, 70], 23).transpose(0, 1), t([45, 66], 24)],
    ['B transposed 63x47', t([50, 63], 25), t([47, 63], 26).transpose(0, 1)],
    ['both transposed, batched', t([2, 39, 41], 27).transpose(1, 2), t([2, 43, 39], 28).transpose(1, 2)],
    ['A rows sliced (row stride > k)', t([48, 80], 29).narrow(1, 3, 67), t([67, 52], 30)],
    ['B columns stepped', t([40, 56], 31), t([56, 130], 32).slice(1, 1, 130, 2)],
    ['A rows stepped, B a column slice', t([90, 48], 33).slice(0, 0, 90, 3), t([48, 100], 34).narrow(1, 5, 90)],
    ['A expanded batch', t([1, 36, 40], 35).expand([3, 36, 40]), t([3, 40, 44], 36)],
    ['0 x k', t([0, 40], 37), t([40, 30], 38)],
    ['k = 0', t([30, 0], 39), t([0, 40], 40)],
    ['n = 0', t([30, 40], 41), t([40, 0], 42)],
    ['batch 0', t([0, 30, 40], 43), t([0, 40, 50], 44)],
  ];
}

function run() {
  const failures = [];
  let count = 0;
  for (const [name, a, b] of cases()) {
    count++;
    try {
      const c = kd.matmul(a, b);
      if (c.dtype !== 'bfloat16') failures.push(`${name}: dtype ${c.dtype}`);
      check(name, c, reference(f64(a), f64(b)), failures);
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
    }
  }
  // Gradients go through the same kernel: dA = G @ B^T, dB = A^T @ G.
  for (const [name, m, k, n] of [['grad 45x67x39', 45, 67, 39], ['grad 64x128x96', 64, 128, 96]]) {
    count++;
    try {
      const a = filled([m, k], 50).requiresGrad_(), b = filled([k, n], 51).requiresGrad_();
      const g = filled([m, n], 52);
      kd.matmul(a, b).backward(g);
      check(`${name} dA`, a.grad, reference(f64(g), f64(b.detach().transpose(0, 1))), failures);
      check(`${name} dB`, b.grad, reference(f64(a.detach().transpose(0, 1)), f64(g)), failures);
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
    }
  }
  return { kernel: kd.build.bf16Gemm, cases: count, failures };
}

module.exports = { run };

if (require.main === module) process.stdout.write(JSON.stringify(run()) + '\n');
