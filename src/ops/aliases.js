// aliases.js - other names of ops: 'namespace.name' -> the op's JS name. An alias is the op itself
// under a second name (tools/gen-ops.js installs the same function object there and declares its
// signatures in types/ops.gen.d.ts), so its autocast policy, gradient and kernels are the op's,
// as PyTorch's alias ops (torch.special.psi is digamma) dispatch to the one op.
// The op's own namespaces come from its `ns` field; this table is for names that differ from the
// op's, or for ops declared in another family's file.
'use strict';

module.exports = {
  // torch.special (PyTorch 1.13)
  'special.digamma': 'digamma',
  'special.psi': 'digamma',
  'special.gammaln': 'lgamma',
  'special.polygamma': 'polygamma',
  'special.multigammaln': 'mvlgamma',
  'special.gammainc': 'igamma',
  'special.gammaincc': 'igammac',
  'special.i0': 'i0',
  'special.logit': 'logit',
  'special.expit': 'sigmoid',
  'special.exp2': 'exp2',
  'special.expm1': 'expm1',
  'special.log1p': 'log1p',
  'special.erf': 'erf',
  'special.erfc': 'erfc',
  'special.erfinv': 'erfinv',
  'special.round': 'round',
  'special.softmax': 'softmax',
  'special.logSoftmax': 'logSoftmax',
  'special.logsumexp': 'logsumexp',
};
