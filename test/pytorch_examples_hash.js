// pytorch_examples_hash.js - the deterministic weights and data of the parity tests of
// examples/pytorch/ (test/pytorch_examples.test.js), made bit for bit as
// tools/fixtures/pytorch_examples/common.py makes them for PyTorch (see its header):
//   hashUniform(n, seed)       n float64 values in [0, 1): murmur3's 32-bit finalizer of i + seed * 0x9E3779B9
//   uniformTensor(shape, seed, lo, hi), intTensor(shape, seed, n)
//   initParams(model)          every named parameter, in order, filled as common.py fills it
'use strict';

const kd = require('..');

function hashUniform(n, seed) {
  const out = new Float64Array(n);
  const base = Number((BigInt(seed) * 0x9E3779B9n) & 0xffffffffn);
  for (let i = 0; i < n; i++) {
    let x = (i + base) >>> 0;
    x ^= x >>> 16;
    x = Math.imul(x, 0x85ebca6b) >>> 0;
    x ^= x >>> 13;
    x = Math.imul(x, 0xc2b2ae35) >>> 0;
    x ^= x >>> 16;
    out[i] = (x >>> 0) / 4294967296;
  }
  return out;
}

const numel = (shape) => shape.reduce((a, b) => a * b, 1);

function uniformTensor(shape, seed, lo = -1, hi = 1) {
  const u = hashUniform(numel(shape), seed);
  const v = new Float32Array(u.length);
  for (let i = 0; i < u.length; i++) v[i] = lo + (hi - lo) * u[i];
  return kd.tensor(v).reshape(shape);
}

function intTensor(shape, seed, n) {
  const u = hashUniform(numel(shape), seed);
  const v = new BigInt64Array(u.length);
  for (let i = 0; i < u.length; i++) v[i] = BigInt(Math.floor(u[i] * n));
  return kd.tensor(v).reshape(shape);
}

function initParams(model) {
  kd.noGrad(() => {
    let k = 0;
    for (const [name, p] of model.namedParameters()) {
      const u = hashUniform(p.numel(), 1000 + k++);
      const v = new Float32Array(u.length);
      const matrix = p.ndim > 1;
      const fanIn = matrix ? Math.sqrt(p.numel() / p.shape[0]) : 0;
      for (let i = 0; i < u.length; i++) {
        const w = 2 * u[i] - 1;
        v[i] = !matrix && name.endsWith('weight') ? 1 + 0.1 * w : (matrix ? w / fanIn : w * 0.1);
      }
      p.copy_(kd.tensor(v).reshape(p.shape));
    }
  });
}

module.exports = { hashUniform, uniformTensor, intTensor, initParams };
