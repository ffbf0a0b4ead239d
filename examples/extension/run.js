// run.js - loads the example C extension (scaled_tanh.c, a fused op whose backward is a second
// fused op) with kd.utils.cppExtension.load and checks it: values against Math.tanh, gradients
// with kd.autograd.gradcheck. With CUDA (a GPU, or KINDLING_CUDA=emulate) it also compiles the
// CUDA kernels (scaled_tanh_cuda.cu) and runs the op on 'cuda'. `node examples/extension/run.js`
'use strict';

const path = require('node:path');
const kd = require('../..');

/** The options of the extension: CPU kernels, and CUDA kernels too when cuda is true. */
function scaledTanhOptions({ cuda = false } = {}) {
  const sources = [path.join(__dirname, 'scaled_tanh.c')];
  if (!cuda) return { name: 'scaled_tanh', sources };
  return { name: 'scaled_tanh', sources: [...sources, path.join(__dirname, 'scaled_tanh_cuda.cu')], extraCflags: ['-DWITH_CUDA'] };
}

/** Loads the extension (compiled once, then from the cache). */
function loadScaledTanh(opts) {
  return kd.utils.cppExtension.load(scaledTanhOptions(opts));
}

if (require.main === module) {
  const cuda = kd.cuda.isAvailable();
  const ext = loadScaledTanh({ cuda });
  console.log(`loaded ${ext.path}${ext.built ? ' (compiled now)' : ' (from the cache)'}`);
  const x = kd.randn([5], { dtype: 'float64', device: cuda ? 'cuda' : 'cpu', requiresGrad: true });
  const y = kd.ops.extdemo.scaled_tanh(x, 1.5);
  const expected = Array.from(x.dataSync(), (v) => Math.tanh(1.5 * v));
  console.log('y        ', Array.from(y.dataSync(), (v) => v.toFixed(6)).join(' '));
  console.log('expected ', expected.map((v) => v.toFixed(6)).join(' '));
  console.log('gradcheck', kd.autograd.gradcheck((t) => kd.ops.extdemo.scaled_tanh(t, 1.5), [x]));
}

module.exports = { loadScaledTanh, scaledTanhOptions };
