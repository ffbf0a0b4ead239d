// oplist/quantized.js - the int8 dynamic quantized linear layer (kd.ao.nn.quantized.dynamic.Linear,
// lib/ao/): packing a qint8 weight once, at quantization time, and the layer's forward, which
// quantizes its float32 input per call, multiplies in int32 and dequantizes with the bias
// (PyTorch 1.13's quantized::linear_prepack / linear_dynamic; Note [int8 dynamic linear
// numerics] in src/cpu/qlinear.c). Kernels: src/cpu/qlinear.c. No gradients (PyTorch's quantized
// ops have none). kd._internal: the module calls them. Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'], kind: 'linalg', flags: ['nondiff'] };

module.exports = [
  { ...INTERNAL, name: 'qlinearPackWeight', args: 'Tensor weight', returns: 'Tensor', cpu: 'kd_cpu_qlinear_pack',
    doc: 'Packs an int8 [out, in] weight for qlinearDynamic (Note [Packed int8 weights] in src/cpu/qlinear.c).' },
  { ...INTERNAL, name: 'qlinearDynamic',
    args: 'Tensor input, Tensor packedWeight, Tensor weightScale, Tensor? bias, int inFeatures, int outFeatures, bool reduceRange=true',
    returns: 'Tensor', cpu: 'kd_cpu_qlinear_dynamic',
    doc: 'int8 dynamic quantized linear: input quantized to uint8 per call, int32 product with the packed qint8 weight, float32 output.' },
];
