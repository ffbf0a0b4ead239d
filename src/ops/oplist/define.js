// oplist/define.js - shorthand constructors for op-list entries of common shapes (unary and binary
// pointwise ops, comparisons, factories, *Like factories). Part of the op list (see ./index.js).
'use strict';

const unary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_unary', doc, ...extra,
});
// cpuScalars: a 0-dim CPU tensor may join tensors on another device, as in PyTorch's binary
// TensorIterator ops (allow_cpu_scalars); See Note [CPU scalars] in src/dispatch/dispatch.c.
const binary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self, Tensor|Scalar other', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_binary', cpuScalars: true, doc, ...extra,
});
const compare = (name, code, doc) => binary(name, code, doc, { flags: ['nondiff'] });
const factory = (name, args, doc, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', doc, ...extra,
});
const like = (name, args, code, doc) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', code, composite: 'kd_composite_like', doc,
});

module.exports = { unary, binary, compare, factory, like };
