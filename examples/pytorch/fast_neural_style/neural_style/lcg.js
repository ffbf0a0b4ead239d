// lcg.js - deterministic tensors from a 32-bit LCG (s = 1664525 s + 1013904223 mod 2^32), the
// same values tools/fixtures/pytorch_examples/parity.py computes in Python: value i is
// (s_i >> 8) / 2^24 * (hi - lo) + lo, computed in float64 (IEEE basic operations only, so both
// languages get the same double) and rounded to float32. vgg.js draws the VGG-16 weights with it
// where torchvision's pretrained ones are not available; the parity tests build their inputs with it.
'use strict';

const kd = require('../../../..');

/** The float32 tensor of `shape` drawn from the LCG seeded `seed`, uniform in [lo, hi). */
function lcgTensor(seed, shape, lo, hi) {
  const n = shape.reduce((a, b) => a * b, 1);
  const vals = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    vals[i] = (s >>> 8) / 16777216 * (hi - lo) + lo;
  }
  return kd.tensor(vals).view(shape);
}

module.exports = { lcgTensor };
