// autocast_policy.js - the autocast policies of PyTorch 1.13 (aten/src/ATen/autocast_mode.cpp),
// per device type, by op name (kindling's camelCase spelling of PyTorch's; one name covers every
// overload: 'conv2d' is conv2d and conv2d.padding). tools/gen-ops.js gives each out-of-place op of
// the op list its policy from here (an op-list entry may override it with its own `autocast:
// {cuda, cpu}` field) and fills the op's Autocast slot of the kernel table with the one generic
// kernel (src/dispatch/autocast.c). In-place ops are never autocast, as in PyTorch.
//
// Policies:
//   lower            floating tensors (not float64) -> the scope's lower-precision dtype
//   fp32             floating tensors (not float64) -> float32
//   fp32SetOptDtype  when the first tensor is eligible and the op's `dtype` is not given, run it
//                    with dtype=float32 (PyTorch's fp32_set_opt_dtype / fp32_append_dtype)
//   promote          eligible tensors -> the widest floating dtype among them
//   banned           an error (CUDA binary_cross_entropy: use binaryCrossEntropyWithLogits)
//   native           (kindling's own) no cast, and autocast off for the ops it calls: a kindling
//                    composite of what is ONE op in PyTorch without a policy for the device
//                    (CPU dot runs float32 in PyTorch; kindling's dot would otherwise reach mm's
//                    policy). Composites of PyTorch composites (einsum, hstack) have no entry:
//                    PyTorch casts the ops inside them too.
// Names kindling does not have (yet) are kept so that a family adding the op gets its policy;
// docs/OPS.md lists them. A composite op with a policy casts once at its own level: the ops it
// calls run with autocast excluded, as PyTorch's ExcludeDispatchKeyGuard does.
'use strict';

module.exports = {
  // AutocastCUDA (float16 by default)
  cuda: {
    lower: ['conv1d', 'conv2d', 'conv3d', 'convTbc', 'convTranspose1d', 'convTranspose2d', 'convTranspose3d',
      'convolution', 'prelu', 'addmm', 'addmv', 'addr', 'matmul', 'einsum', 'mm', 'mv', 'linear', 'addbmm',
      'baddbmm', 'bmm', 'chainMatmul', 'linalgMultiDot', 'lstmCell', 'gruCell', 'rnnTanhCell', 'rnnReluCell'],
    fp32: ['acos', 'asin', 'cosh', 'erfinv', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'reciprocal',
      'rsqrt', 'sinh', 'tan', 'pow', 'softplus', 'layerNorm', 'nativeLayerNorm', 'groupNorm', 'frobeniusNorm',
      'nuclearNorm', 'cosineSimilarity', 'poissonNllLoss', 'cosineEmbeddingLoss', 'nllLoss', 'nllLoss2d',
      'hingeEmbeddingLoss', 'klDiv', 'l1Loss', 'smoothL1Loss', 'huberLoss', 'mseLoss', 'marginRankingLoss',
      'multilabelMarginLoss', 'softMarginLoss', 'tripletMarginLoss', 'multiMarginLoss',
      'binaryCrossEntropyWithLogits', 'dist', 'pdist', 'cdist', 'renorm', 'logsumexp'],
    fp32SetOptDtype: ['prod', 'softmax', 'logSoftmax', 'cumprod', 'cumsum', 'sum', 'norm'],
    promote: ['addcdiv', 'addcmul', 'atan2', 'bilinear', 'cat', 'cross', 'dot', 'gridSampler', 'indexPut',
      'tensordot', 'scatterAdd', 'stack', 'indexCopy'],
    banned: ['binaryCrossEntropy'],
    native: ['vdot', 'batchNorm'],
  },
  // AutocastCPU (bfloat16, the only dtype CPU autocast accepts in 1.13)
  cpu: {
    lower: ['conv1d', 'conv2d', 'conv3d', 'bmm', 'mm', 'baddbmm', 'addmm', 'addbmm', 'linear', 'matmul', 'convTbc'],
    fp32: ['avgPool3d', 'binaryCrossEntropy', 'gridSampler', 'polar', 'prod', 'quantile', 'nanquantile', 'stft',
      'cdist', 'trace', 'viewAsComplex', 'cholesky', 'choleskyInverse', 'choleskySolve', 'inverse', 'luSolve',
      'orgqr', 'ormqr', 'pinverse', 'maxPool3d', 'maxUnpool2d', 'maxUnpool3d', 'adaptiveAvgPool3d',
      'reflectionPad1d', 'reflectionPad2d', 'replicationPad1d', 'replicationPad2d', 'replicationPad3d',
      'mseLoss', 'cosineEmbeddingLoss', 'nllLoss', 'nllLoss2d', 'hingeEmbeddingLoss', 'poissonNllLoss',
      'smoothL1Loss', 'crossEntropy', 'l1Loss', 'huberLoss', 'marginRankingLoss', 'softMarginLoss',
      'tripletMarginLoss', 'multiMarginLoss', 'ctcLoss', 'klDiv', 'multilabelMarginLoss',
      'binaryCrossEntropyWithLogits', 'geqrf', 'qr', 'svd', 'triangularSolve', 'fractionalMaxPool2d',
      'fractionalMaxPool3d', 'adaptiveMaxPool3d', 'linalgQr', 'linalgCholesky', 'linalgSvd', 'linalgEigh',
      'linalgEigvalsh', 'linalgInv', 'linalgHouseholderProduct', 'linalgTensorinv', 'linalgTensorsolve'],
    promote: ['stack', 'cat', 'indexCopy'],
    native: ['dot', 'vdot', 'mv'],
  },
};
