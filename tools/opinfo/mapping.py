"""mapping.py - THE table of how an OpInfo's PyTorch call becomes kindling's, used by
tools/opinfo/generate.py (and nothing else: the fixtures it writes carry the kindling call).

The default needs no entry: OpInfo `a.b_c` -> `kd.a.bC(input, *args, {camelCasedKwargs})` when
kindling has that function, else the Tensor method `input.bC(*args, {...})` when it has that.
kindling is asked which names exist at generation time, so an entry may name an op that is not
there yet: it is covered as soon as the op lands and the generator runs again.

Entry fields (all optional):
  js        the kindling path ('clampMax', 'nn.functional.pad', 'linalg.vectorNorm')
  form      'method' to call it as a Tensor method even where a function exists
  call      fn(sample) -> (args, kwargs): rewrites PyTorch's call (the input first); raise
            Unsupported(reason) for a sample kindling cannot express
  cloneSelf True: an in-place method applied to a clone of the input (the OpInfo's own lambda)
  compareInts  compare for integer and bool samples (where ties make indices ambiguous)
  compareSample  fn(sample) -> a compare mode for that sample, or None for the OpInfo's
  compare   how outputs are compared: 'values' (default), 'shape' (random ops: shape and dtype
            only), 'abs' (sign-ambiguous factors: absolute values), or a list of the output
            indices to compare
  random    True: a random op (values are not compared, no gradients)
  maxNumel  a larger element budget per sample than generate.py's MAX_SAMPLE_NUMEL, for an OpInfo
            whose every sample is past it
  output    i: the OpInfo's op is a lambda returning output i of the kindling op's tuple
            (lstsq(...)[0]): the replay takes that output
  missing   why kindling does not cover this OpInfo (listed in docs/OPS.md); the default reason
            is that kindling has no op of that name
  note      how the mapping differs from PyTorch's call
"""
import re

import torch


class Unsupported(Exception):
    """A sample (or an argument of it) kindling's API cannot express; counted as skipped."""


class Call:
    def __init__(self, args, kwargs):
        self.args = list(args)
        self.kwargs = dict(kwargs)


def camel(name):
    """snake_case -> camelCase, per dotted segment: nn.functional.log_softmax ->
    nn.functional.logSoftmax. Leading/trailing underscores are kept."""
    return '.'.join(re.sub(r'(?<=[a-z0-9])_([a-z0-9])', lambda m: m.group(1).upper(), seg)
                    for seg in name.split('.'))


def default_call(s):
    return [s.input, *s.args], s.kwargs


def to_dtype(dtype):
    """The cast methods (t.double(), t.long(), ...) are t.to(dtype) in kindling."""
    def call(s):
        kw = dict(s.kwargs)
        if kw.pop('memory_format', torch.preserve_format) != torch.preserve_format:
            raise Unsupported('memory_format argument')
        return [s.input, dtype, *s.args], kw
    return call


def drop_kwargs(*names):
    def call(s):
        kw = {k: v for k, v in s.kwargs.items() if k not in names}
        return [s.input, *s.args], kw
    return call


def reverse_binary(js, copies_other=False):
    """t.__rsub__(other) is other - t: kd.sub(other, t) (kindling's functions take a number first).
    copies_other: PyTorch's Python operator makes `other` a new tensor (torch.tensor(other)), so
    no gradient flows to it (__rpow__)."""
    def call(s):
        other = s.args[0]
        if copies_other and isinstance(other, torch.Tensor):
            other = other.detach()
        return [other, s.input, *s.args[1:]], s.kwargs
    return {'js': js, 'call': call, 'note': 'the reflected operator %s(other, input)' % js}


def no_memory_format(s):
    kw = dict(s.kwargs)
    if kw.pop('memory_format', torch.preserve_format) not in (torch.preserve_format, torch.contiguous_format):
        raise Unsupported('memory_format argument')
    return [s.input, *s.args], kw


def n_first(s):
    """polygamma's OpInfo op is lambda x, n: torch.polygamma(n, x)."""
    kw = dict(s.kwargs)
    n = kw.pop('n') if 'n' in kw else s.args[0]
    return [n, s.input, *s.args[1:]], kw


NOT_IN_KINDLING = 'kindling has no %s'
COMPLEX = 'complex numbers (kindling has no complex dtypes)'
SPARSE = 'sparse tensors (kindling has dense tensors only)'
CUDA_ONLY = 'a CUDA jiterator test op (no CPU samples)'
DEPRECATED = 'deprecated in PyTorch (replaced by torch.linalg)'
INTERNAL = 'a PyTorch-internal or decomposition test op'

# OpInfo name (with '.variant' where one OpInfo name has several) -> entry.
MAP = {
    # ---- renames and reshaped calls
    'clamp_max': {'js': 'clampMax'},
    'clamp_min': {'js': 'clampMin'},
    'true_divide': {'js': 'div', 'note': 'true_divide is div'},
    'div.no_rounding_mode': {'js': 'div'},
    'div.trunc_rounding': {'js': 'div'},
    'div.floor_rounding': {'js': 'div'},
    'max.reduction_with_dim': {'js': 'max'},
    'max.reduction_no_dim': {'js': 'max'},
    'max.binary': {'js': 'max'},
    'min.reduction_with_dim': {'js': 'min'},
    'min.reduction_no_dim': {'js': 'min'},
    'min.binary': {'js': 'min'},
    'softmax.with_dtype': {'js': 'softmax'},
    'log_softmax.dtype': {'js': 'logSoftmax'},
    'nn.functional.softmin.with_dtype': {'js': 'nn.functional.softmin'},
    'round.decimals_0': {'js': 'round'},
    'round.decimals_3': {'js': 'round'},
    'round.decimals_neg_3': {'js': 'round'},
    'split.list_args': {'js': 'split'},
    'split_with_sizes': {'js': 'split', 'note': 'split_with_sizes is split with a list of sizes'},
    # a list input (cat, stack, hstack, ...) is the first argument, as a JS array, by default
    'meshgrid.variadic_tensors': {'js': 'meshgrid', 'note': 'kd.meshgrid(a, b): the op list marks it varargs'},
    'meshgrid.list_of_tensors': {'js': 'meshgrid'},
    'block_diag': {'js': 'blockDiag'},
    'cartesian_prod': {'js': 'cartesianProd'},
    'broadcast_tensors': {'js': 'broadcastTensors'},
    'einsum': {'call': lambda s: ([s.args[0], *s.input], s.kwargs) if isinstance(s.input, (list, tuple)) else (
        [s.args[0], s.input, *s.args[1:]], s.kwargs), 'note': 'kd.einsum(equation, ...operands)'},
    'contiguous': {'form': 'method', 'call': no_memory_format},
    'clone': {'call': no_memory_format},
    'expand': {'form': 'method'},
    'expand_as': {'js': 'expandAs', 'form': 'method'},
    'view': {'form': 'method'},
    'view_as': {'js': 'viewAs', 'form': 'method'},
    'reshape_as': {'js': 'reshapeAs', 'form': 'method'},
    'repeat': {'form': 'method'},
    'unfold': {'form': 'method', 'note': 'Tensor.unfold(dimension, size, step)'},
    'to': {'form': 'method', 'call': drop_kwargs('non_blocking')},
    'zero_': {'form': 'method', 'cloneSelf': True, 'note': 'on a clone of the input, as the OpInfo does'},
    'fill': {'js': 'fill_', 'form': 'method', 'cloneSelf': True, 'note': 'torch.fill(t, v) is t.clone().fill_(v)'},
    'slice': {'form': 'method', 'note': 'Tensor.slice(dim, start, end, step)'},
    # its one sample, (5, 5) x (10, 20), has a 5000-element output (and as large a gradOutput)
    'kron': {'maxNumel': 11000},
    'topk': {'compareInts': [0], 'note': 'integer samples: values only (which of equal values is returned is unspecified)'},
    'bfloat16': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.bfloat16)},
    'bool': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.bool)},
    'byte': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.uint8)},
    'char': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.int8)},
    'double': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.float64)},
    'float': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.float32)},
    'half': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.float16)},
    'int': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.int32)},
    'long': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.int64)},
    'short': {'js': 'to', 'form': 'method', 'call': to_dtype(torch.int16)},
    'chalf': {'missing': COMPLEX},
    '__radd__': reverse_binary('add'),
    '__rmul__': reverse_binary('mul'),
    '__rsub__': reverse_binary('sub'),
    '__rdiv__': reverse_binary('div'),
    '__rpow__': reverse_binary('pow', copies_other=True),
    '__rmod__': reverse_binary('remainder'),
    '__rmatmul__': reverse_binary('matmul'),
    '__rand__': reverse_binary('bitwiseAnd'),
    '__ror__': reverse_binary('bitwiseOr'),
    '__rxor__': reverse_binary('bitwiseXor'),
    'nn.functional.relu': {'js': 'nn.functional.relu'},
    'nn.functional.pad.constant': {'js': 'nn.functional.pad'},
    'nn.functional.pad.reflect': {'js': 'nn.functional.pad'},
    'nn.functional.pad.replicate': {'js': 'nn.functional.pad'},
    'nn.functional.pad.circular': {'js': 'nn.functional.pad'},
    'nn.functional.interpolate.nearest': {'js': 'nn.functional.interpolate'},
    'nn.functional.interpolate.linear': {'js': 'nn.functional.interpolate'},
    'nn.functional.interpolate.bilinear': {'js': 'nn.functional.interpolate'},
    'nn.functional.interpolate.bicubic': {'js': 'nn.functional.interpolate'},
    'nn.functional.interpolate.trilinear': {'js': 'nn.functional.interpolate'},
    'nn.functional.interpolate.area': {'js': 'nn.functional.interpolate'},
    'nn.functional.batch_norm.without_cudnn': {'js': 'nn.functional.batchNorm'},
    'nn.functional.dropout': {'random': True},
    'nn.functional.dropout2d': {'random': True},
    'nn.functional.dropout3d': {'random': True},
    'nn.functional.rrelu': {'random': True},
    'nn.functional.feature_alpha_dropout.with_train': {'js': 'nn.functional.featureAlphaDropout', 'random': True},
    'nn.functional.feature_alpha_dropout.without_train': {'js': 'nn.functional.featureAlphaDropout'},
    'norm.nuc': {'js': 'norm'},
    'norm.fro': {'js': 'norm'},
    'norm.inf': {'js': 'norm'},
    'nn.functional.embedding': {'call': lambda s: ([s.args[0], s.input, *s.args[1:]], s.kwargs),
                                 'note': "the OpInfo's op is embedding(idx, weight) with the weight first"},
    'nn.functional._scaled_dot_product_attention': {
        'missing': "PyTorch 1.13's private _scaled_dot_product_attention(q, k, v, mask, dropout, need_attn_weights, "
                   'is_causal) returns (output, weights); kindling has PyTorch 2\'s scaledDotProductAttention'},
    'where': {'call': lambda s: ([s.args[0], s.input, *s.args[1:]], s.kwargs),
              'note': "the OpInfo's op is where(condition, input, other) with the input first"},
    'mvlgamma.mvlgamma_p_1': {'js': 'mvlgamma'},
    'mvlgamma.mvlgamma_p_3': {'js': 'mvlgamma'},
    'mvlgamma.mvlgamma_p_5': {'js': 'mvlgamma'},
    'polygamma.polygamma_n_0': {'js': 'polygamma', 'call': n_first},
    'polygamma.polygamma_n_1': {'js': 'polygamma', 'call': n_first},
    'polygamma.polygamma_n_2': {'js': 'polygamma', 'call': n_first},
    'polygamma.polygamma_n_3': {'js': 'polygamma', 'call': n_first},
    'polygamma.polygamma_n_4': {'js': 'polygamma', 'call': n_first},
    'special.polygamma.special_polygamma_n_0': {'js': 'special.polygamma', 'call': n_first},
    'scatter_reduce.sum': {'js': 'scatterReduce'},
    'scatter_reduce.prod': {'js': 'scatterReduce'},
    'scatter_reduce.mean': {'js': 'scatterReduce'},
    'scatter_reduce.amin': {'js': 'scatterReduce'},
    'scatter_reduce.amax': {'js': 'scatterReduce'},
    'linalg.det.singular': {'js': 'linalg.det'},
    'linalg.lstsq.grad_oriented': {'js': 'linalg.lstsq', 'output': 0,
                                   'note': "the OpInfo's op is lstsq(a, b, driver=driver)[0]: the solution"},
    'linalg.norm.subgradients_at_zero': {'js': 'linalg.norm'},
    'linalg.matrix_rank.hermitian': {'js': 'linalg.matrixRank'},
    'linalg.pinv.singular': {'js': 'linalg.pinv', 'call': lambda s: ([(s.input @ s.args[0].mT).detach()], s.kwargs),
                             'note': "the OpInfo's op is pinv(a @ b.mT) (rank-preserving factors): "
                                     'kindling is given the product, so no gradients'},
    'linalg.pinv.hermitian': {'js': 'linalg.pinv'},
    # sign-ambiguous factorisations: compare absolute values (their gradients are recorded only
    # where OpInfo's samples make them gauge-invariant, which needs its output transform)
    'linalg.svd': {'compare': 'abs'},
    'svd': {'compare': 'abs'},
    'linalg.qr': {'compare': 'abs'},
    'qr': {'compare': 'abs'},
    'linalg.eigh': {'compare': 'abs'},
    'linalg.lstsq': {'compare': [0], 'note': 'solution only (residuals/rank/singular values depend on the driver)'},
    'unique': {'compareSample': lambda s: 'shape' if s.kwargs.get('sorted') is False else None,
               'note': 'sorted=False: the order is unspecified (PyTorch returns hash order): shapes only'},
    # ops whose integer samples have ties: which of equal values' indices is returned is unspecified
    'sort': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    'argsort': {'compareInts': 'shape', 'note': 'integer samples: shape only (ties)'},
    'kthvalue': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    'median': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    'nanmedian': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    'mode': {'compare': [0], 'note': 'values only (the index of a repeated mode is unspecified)'},
    'cummax': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    'cummin': {'compareInts': [0], 'note': 'integer samples: values only (ties)'},
    # random ops: shapes, dtypes and errors only
    'randn': {'random': True},
    'randn_like': {'js': 'randnLike', 'random': True},
    'rand_like': {'js': 'randLike', 'random': True},
    'randint_like': {'js': 'randintLike', 'random': True},
    'uniform': {'js': 'uniform_', 'form': 'method', 'random': True},
    'multinomial': {'random': True},
    'normal': {'random': True},
    'normal.number_mean': {'js': 'normal', 'random': True},
    'bernoulli': {'random': True},
    'randperm': {'random': True},
    'randint': {'random': True},
    'rand': {'random': True},
    'poisson': {'random': True},
    'empty': {'random': True, 'note': 'uninitialised: shape and dtype only'},
    'empty_like': {'js': 'emptyLike', 'random': True, 'note': 'uninitialised: shape and dtype only'},
    'new_empty': {'js': 'newEmpty', 'form': 'method', 'random': True},
    'new_empty_strided': {'js': 'newEmptyStrided', 'form': 'method', 'random': True},
    # factories
    'tril_indices': {'js': 'trilIndices'},
    'triu_indices': {'js': 'triuIndices'},
    'new_zeros': {'js': 'newZeros', 'form': 'method'},
    'new_ones': {'js': 'newOnes', 'form': 'method'},
    'new_full': {'js': 'newFull', 'form': 'method'},
    # ops whose names differ
    'T': {'missing': 'the T/H/mT/mH properties (kindling has t(), transpose and mT via transpose(-2, -1))'},
    'H': {'missing': COMPLEX},
    'mT': {'missing': 'the T/H/mT/mH properties (kindling has t(), transpose and mT via transpose(-2, -1))'},
    'mH': {'missing': COMPLEX},
    # out of scope
    'conj': {'missing': COMPLEX}, 'conj_physical': {'missing': COMPLEX}, 'resolve_conj': {'missing': COMPLEX},
    'resolve_neg': {'missing': COMPLEX}, 'view_as_real': {'missing': COMPLEX},
    'view_as_complex': {'missing': COMPLEX}, 'complex': {'missing': COMPLEX}, 'polar': {'missing': COMPLEX},
    'real': {'missing': COMPLEX}, 'imag': {'missing': COMPLEX}, 'angle': {'missing': COMPLEX},
    'isreal': {'missing': COMPLEX}, 'nn.functional.silu.complex': {'missing': COMPLEX},
    'to_sparse': {'missing': SPARSE}, 'sparse.sampled_addmm': {'missing': SPARSE},
    'jiterator_unary': {'missing': CUDA_ONLY}, 'jiterator_binary': {'missing': CUDA_ONLY},
    'jiterator_4inputs_with_extra_args': {'missing': CUDA_ONLY},
    'jiterator_binary_return_by_ref': {'missing': CUDA_ONLY}, 'jiterator_2inputs_2outputs': {'missing': CUDA_ONLY},
    'symeig': {'missing': DEPRECATED}, 'addmm.decomposed': {'missing': INTERNAL},
    'native_layer_norm': {'missing': INTERNAL}, 'native_batch_norm': {'missing': INTERNAL},
    'nn.functional.cross_entropy': {'missing': 'its OpInfo sample_inputs raise on Python 3.11 (random.sample of a set)'},
    'stft': {'missing': COMPLEX}, 'istft': {'missing': COMPLEX},
}

GROUPS = [
    ('fft.', 'FFT'), ('linalg.', 'Linear algebra'), ('special.', 'Special functions'),
    ('masked.', 'Masked reductions'), ('sparse.', 'Sparse'), ('nn.functional.', 'nn.functional'),
]


def group_of(key):
    for prefix, group in GROUPS:
        if key.startswith(prefix):
            return group
    entry = MAP.get(key, {})
    if entry.get('missing') == COMPLEX:
        return 'Complex numbers'
    return 'Tensor ops'


def resolve(key, op, functions, methods):
    """The kindling target of an OpInfo: {'fn', 'form', ...entry}, or {'missing': reason}."""
    entry = dict(MAP.get(key, {}))
    if 'missing' in entry:
        return entry
    if key.startswith('fft.') and 'fft' not in entry:
        # all of torch.fft returns complex tensors or takes them
        if not functions.get('fft'):
            return {'missing': 'FFTs (kindling has no complex dtypes and no torch.fft)'}
    if key.startswith('masked.') and not functions.get('masked'):
        return {'missing': 'torch.masked (prototype masked reductions)'}
    path = entry.get('js') or camel(op.name)
    ns, _, name = path.rpartition('.')
    if entry.get('form') == 'method':
        if name in methods:
            return {**entry, 'fn': name, 'form': 'method'}
    elif name in functions.get(ns, ()):
        return {**entry, 'fn': path, 'form': 'function'}
    elif not ns and name in methods:
        return {**entry, 'fn': name, 'form': 'method'}
    where = ('Tensor.' + name) if entry.get('form') == 'method' else ('kd.' + path)
    return {'missing': NOT_IN_KINDLING % where}


def kindling_call(key, target, sample):
    """Call(args, kwargs) for kindling (camelCase kwarg names; the input first)."""
    if 'out' in sample.kwargs:
        raise Unsupported('out= argument (kindling has no out= tensors)')
    call = MAP.get(key, {}).get('call', default_call)
    args, kwargs = call(sample)
    return Call(args, {camel(k): v for k, v in kwargs.items()})
