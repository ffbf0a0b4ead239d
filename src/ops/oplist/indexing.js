// oplist/indexing.js - indexing ops: indexSelect/gather/take (kd_cpu_gather), scatter/scatterAdd/
// scatterReduce/indexAdd/indexCopy/indexFill (kd_cpu_scatter), advanced indexing index/indexPut
// (what lib/indexing.js lowers t.index([...]) to), maskedSelect, nonzero and nn.functional.oneHot.
// Part of the op list (see ./index.js).
'use strict';

const T = 'Tensor';
// Gradients of scatterReduce, as PyTorch's scatter_reduce_backward: 'mean' divides by the
// number of values reduced into each place; 'amax'/'amin' share the gradient evenly among the
// values equal to the result; 'prod' is result / value, with a single zero handled by redoing
// the product without it. Without includeSelf, the places written get no gradient in self.
const SR_COUNT = "(includeSelf ? onesLike(grad) : zerosLike(grad)).scatterAdd(dim, index, onesLike(src))";
const SR_MEAN = `(grad / ${SR_COUNT}.maskedFill(${SR_COUNT} == 0, 1))`;
const SR_SELF_IS = '(self == result).to(dtype=grad.dtype)';
const SR_SRC_IS = '(src == result.gather(dim, index)).to(dtype=grad.dtype)';
const SR_EXTREME = `(grad / ${SR_SELF_IS}.scatterAdd(dim, index, ${SR_SRC_IS}))`;
const SR_SELF_NZ = 'self.maskedFill(self == 0, 1)';
const SR_SRC_ONE_ZERO = '(src == 0).logicalAnd(zerosLike(self).scatterAdd(dim, index, (src == 0).to(dtype=self.dtype)).gather(dim, index) == 1)';
const SR_SELF = "reduce == 'sum' ? grad : (reduce == 'mean' ? " + SR_MEAN + " : (reduce == 'prod' ? " +
  `grad * ${SR_SELF_NZ}.scatterReduce(dim, index, src, reduce, includeSelf=includeSelf) / ${SR_SELF_NZ} : ` +
  `${SR_SELF_IS} * ${SR_EXTREME}))`;
const scatterReduceBackward = {
  self: `includeSelf ? (${SR_SELF}) : (${SR_SELF}).scatter(dim, index, 0)`,
  src: "reduce == 'sum' ? grad.gather(dim, index) : (reduce == 'mean' ? " + SR_MEAN + '.gather(dim, index) : ' +
    "(reduce == 'prod' ? " + `where(${SR_SRC_ONE_ZERO}, (grad * self.scatterReduce(dim, index, src.maskedFill(${SR_SRC_ONE_ZERO}, 1), reduce, includeSelf=includeSelf)).gather(dim, index), ` +
    '(grad * result).gather(dim, index) / src.maskedFill(src == 0, 1)) : ' +
    `${SR_SRC_IS} * ${SR_EXTREME}.gather(dim, index)))`,
};

module.exports = [
  { name: 'indexSelect', args: 'Tensor self, int dim, Tensor index', returns: T, variants: ['function', 'method'],
    kind: 'composite', code: 'KD_GATHER_INDEX_SELECT', cpu: 'kd_cpu_gather',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).indexAdd(dim, index, grad)' },
    doc: 'The entries of self at `index` (a vector of int32/int64) along dim.' },
  { name: 'gather', args: 'Tensor self, int dim, Tensor index', returns: T, variants: ['function', 'method'],
    kind: 'composite', code: 'KD_GATHER_GATHER', cpu: 'kd_cpu_gather',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).scatterAdd(dim, index, grad)' },
    doc: 'out[i][j] = self[index[i][j]][j] (for dim 0): values along dim picked by an int64 index of the same rank.' },
  { name: 'take', args: 'Tensor self, Tensor index', returns: T, variants: ['function', 'method'],
    kind: 'composite', code: 'KD_GATHER_TAKE', cpu: 'kd_cpu_gather',
    backward: { self: 'zeros([self.numel], dtype=grad.dtype).indexPut([index], grad, true).reshape(self.shape)' },
    doc: 'self flattened, at the (int64, possibly negative) positions of index; the result has the shape of index.' },
  { name: 'scatter', args: 'Tensor self, int dim, Tensor index, Tensor|Scalar src, *, str? reduce', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_SCATTER', cpu: 'kd_cpu_scatter',
    backward: { self: 'grad.scatter(dim, index, 0)', src: 'grad.gather(dim, index)' },
    doc: 'self with src (a tensor or a number) written at index along dim; reduce \'add\' or \'multiply\' combines instead.' },
  { name: 'scatterAdd', args: 'Tensor self, int dim, Tensor index, Tensor src', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_ADD', cpu: 'kd_cpu_scatter',
    backward: { self: 'grad', src: 'grad.gather(dim, index)' },
    doc: 'self with src added at index along dim (repeated indices accumulate).' },
  { name: 'scatterReduce', args: 'Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool includeSelf=true',
    returns: T, variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_REDUCE',
    cpu: 'kd_cpu_scatter',
    backward: scatterReduceBackward,
    doc: 'Reduces src into self at index along dim: \'sum\', \'prod\', \'mean\', \'amax\' or \'amin\' (with or without self\'s values).' },
  { name: 'indexAdd', args: 'Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_INDEX_ADD', cpu: 'kd_cpu_scatter',
    backward: { self: 'grad', source: 'grad.indexSelect(dim, index) * alpha' },
    doc: 'self with alpha * source added at the positions `index` along dim.' },
  { name: 'indexCopy', args: 'Tensor self, int dim, Tensor index, Tensor source', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_INDEX_COPY', cpu: 'kd_cpu_scatter',
    backward: { self: 'grad.indexFill(dim, index, 0)', source: 'grad.indexSelect(dim, index)' },
    doc: 'self with the slices of source copied to the positions `index` along dim.' },
  { name: 'indexFill', args: 'Tensor self, int dim, Tensor index, Tensor|Scalar value', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_INDEX_FILL', cpu: 'kd_cpu_scatter',
    backward: { self: 'grad.indexFill(dim, index, 0)', value: 'grad.indexSelect(dim, index).sum()' },
    doc: 'self with the positions `index` along dim set to value (a number or a 0-d tensor).' },
  { name: 'index', args: 'Tensor self, Tensor?[] indices', returns: T, variants: ['function', 'method'],
    kind: 'composite', code: 'KD_GATHER_INDEX', cpu: 'kd_cpu_gather',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).indexPut(indices, grad, true)' },
    doc: 'Advanced indexing (aten::index.Tensor): integer/bool index tensors per dim, null for a full slice.' },
  { name: 'indexPut', args: 'Tensor self, Tensor?[] indices, Tensor values, bool accumulate=false', returns: T,
    variants: ['function', 'method', 'inplace'], kind: 'composite', code: 'KD_SCATTER_INDEX_PUT', cpu: 'kd_cpu_scatter',
    backward: { self: 'accumulate ? grad : grad.indexPut(indices, zeros([], dtype=grad.dtype), false)',
      values: 'grad.index(indices)' },
    doc: 'self[indices] = values (or += with accumulate), indices as in index().' },
  { name: 'maskedSelect', args: 'Tensor self, Tensor mask', returns: T, variants: ['function', 'method'],
    kind: 'composite', cpu: 'kd_cpu_masked_select',
    backward: { self: 'maskedSelectBackward(grad, self, mask)' },
    doc: 'The elements of self (broadcast with the bool mask) where mask is true, as a 1-D tensor.' },
  { name: 'maskedSelectBackward', args: 'Tensor gradOutput, Tensor self, Tensor mask', returns: T, variants: ['function'],
    ns: ['_internal'], kind: 'composite', cpu: 'kd_cpu_masked_select_backward',
    backward: { gradOutput: 'grad.maskedSelect(mask)', self: 'zerosLike(grad)' },
    doc: 'The gradient of maskedSelect: zeros of the broadcast shape with grad put where mask is true.' },
  { name: 'nonzero', args: 'Tensor self', returns: T, variants: ['function', 'method'], kind: 'composite',
    cpu: 'kd_cpu_nonzero', flags: ['nondiff'],
    doc: 'The indices of the non-zero elements, one row per element ([n, ndim], int64); {asTuple: true} gives one tensor per dim.' },
  { name: 'oneHot', args: 'Tensor self, int numClasses=-1', returns: T, variants: ['function'], ns: ['nn.functional'],
    kind: 'composite', cpu: 'kd_cpu_one_hot', flags: ['nondiff'],
    doc: 'int64 one-hot encoding: shape self.shape + [numClasses] (max + 1 when -1).' },
];
