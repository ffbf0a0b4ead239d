// lib/backends.js - kd.backends: process-wide backend switches, after torch.backends.
// kd.backends.cuda.matmul.allowTF32 (default false, as PyTorch >= 1.12): float32 matrix
// products on CUDA may use TF32 tensor cores (10-bit mantissa inputs, float32 accumulation).
// Read by the CUDA gemm at each launch (src/cuda_bridge/bridge.c); setting it loads nothing.
'use strict';

const { typeError } = require('./errors');

module.exports = (binding) => {
  const native = binding.cuda;
  const matmul = {};
  Object.defineProperty(matmul, 'allowTF32', {
    enumerable: true,
    get: () => native.getAllowTF32(),
    set: (v) => {
      if (typeof v !== 'boolean') throw typeError(`allowTF32 must be a boolean, got ${typeof v}`);
      native.setAllowTF32(v);
    },
  });
  return Object.freeze({ cuda: Object.freeze({ matmul: Object.seal(matmul) }) });
};
