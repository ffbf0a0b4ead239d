#!/usr/bin/env python3
"""gen-fixtures.py - writes test/fixtures/*.json: inputs and the outputs PyTorch computes for them.

Run:  /usr/bin/python3 tools/gen-fixtures.py          (needs torch; CPU is enough; no numpy)

The JSON is committed, so the JS tests (test/*.test.js) never need PyTorch. Conventions:
  tensor spec   {"dtype": "float32", "shape": [2, 3], "data": [flat values, row-major]}
                 optional "views": [["transpose", 0, 1], ["slice", dim, start, end, step], ...]
                 applied in order to the contiguous tensor built from data (test/helpers.js
                 buildInput does the same with kindling ops), so inputs can be non-contiguous.
  scalar        {"scalar": 2} or {"scalar": 2.5} or {"scalar": true} (a JS number/boolean)
  NaN/Inf       the strings "nan", "inf", "-inf"
  error         {"error": {"type": "RuntimeError", "message": "<PyTorch's message>"}}
Inputs are deterministic: explicit values, or a 32-bit LCG below (no torch RNG).

Where torch 1.13 has no CPU kernel for float16/bfloat16 ("not implemented for 'Half'"), and for
half-precision matmul/sum/mean (1.13 accumulates some of them in half precision), the expected value is
computed in float32 and rounded to the half type, which is what newer PyTorch versions do.
"""
import json
import math
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'test', 'fixtures')

DT = {
    'float32': torch.float32, 'float64': torch.float64, 'float16': torch.float16,
    'bfloat16': torch.bfloat16, 'int8': torch.int8, 'uint8': torch.uint8, 'int16': torch.int16,
    'int32': torch.int32, 'int64': torch.int64, 'bool': torch.bool,
}
DT_NAME = {v: k for k, v in DT.items()}
FLOATS = ['float32', 'float64', 'float16', 'bfloat16']
INTS = ['int32', 'int64', 'uint8', 'int8', 'int16']
ALL = ['float32', 'float64', 'float16', 'bfloat16', 'int32', 'int64', 'uint8', 'int8', 'int16', 'bool']


# ---------------------------------------------------------------------------------------------
# deterministic data

class LCG:
    def __init__(self, seed):
        self.s = seed & 0xffffffff

    def next(self):
        self.s = (1664525 * self.s + 1013904223) & 0xffffffff
        return self.s

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.next() / 4294967296.0)

    def int(self, lo, hi):  # [lo, hi]
        return lo + self.next() % (hi - lo + 1)


rng = LCG(12345)


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def values(dtype, n, kind='default'):
    """n deterministic values suited to dtype. kind: default | positive | nonzero | distinct."""
    if dtype == 'bool':
        return [rng.next() % 2 == 1 for _ in range(n)]
    if dtype in INTS:
        lo, hi = (0, 20) if dtype == 'uint8' else (-10, 10)
        if kind == 'positive':
            lo = 1
        if kind == 'distinct':
            base = list(range(lo, lo + n)) if dtype == 'uint8' else list(range(-(n // 2), n - n // 2))
            for i in range(len(base) - 1, 0, -1):
                j = rng.next() % (i + 1)
                base[i], base[j] = base[j], base[i]
            return base
        out = []
        while len(out) < n:
            v = rng.int(lo, hi)
            if kind == 'nonzero' and v == 0:
                continue
            out.append(v)
        return out
    # floats: 3 decimal digits keep the JSON short; rounded to the dtype below
    out = []
    while len(out) < n:
        if kind == 'positive':
            v = round(rng.uniform(0.05, 4.0), 3)
        else:
            v = round(rng.uniform(-3.0, 3.0), 3)
        if kind == 'nonzero' and abs(v) < 0.05:
            continue
        out.append(v)
    if dtype in ('float16', 'bfloat16'):
        out = torch.tensor(out, dtype=torch.float32).to(DT[dtype]).double().tolist()
    elif dtype == 'float32':
        out = torch.tensor(out, dtype=torch.float32).double().tolist()
    return out


def spec(dtype, shape, data=None, kind='default', views=None):
    if data is None:
        data = values(dtype, numel(shape), kind)
    s = {'dtype': dtype, 'shape': list(shape), 'data': [enc_value(v) for v in data]}
    if views:
        s['views'] = views
    return s


SPECIALS = [float('nan'), float('inf'), float('-inf'), 0.0, -0.0, 1.0, -1.5, 2.5, 100.0, -100.0, 1e-3, 0.5]


def enc_value(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return 'nan'
        if math.isinf(v):
            return 'inf' if v > 0 else '-inf'
        if v == 0.0 and math.copysign(1.0, v) < 0:
            return '-0'
        if v == int(v) and abs(v) < 2 ** 53:
            return int(v)
        return v
    return v


def dec_value(v):
    if v == 'nan':
        return float('nan')
    if v == 'inf':
        return float('inf')
    if v == '-inf':
        return float('-inf')
    if v == '-0':
        return -0.0
    return v


# ---------------------------------------------------------------------------------------------
# building inputs in torch exactly as the JS helper does in kindling

def apply_view(t, v):
    name, args = v[0], v[1:]
    if name == 'transpose':
        return t.transpose(args[0], args[1])
    if name == 'permute':
        return t.permute(args[0])
    if name == 'slice':
        dim, start, end, step = args
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end, step)
        return t[tuple(idx)]
    if name == 'narrow':
        return t.narrow(*args)
    if name == 'select':
        return t.select(*args)
    if name == 'expand':
        return t.expand(*args[0])
    if name == 'unsqueeze':
        return t.unsqueeze(args[0])
    if name == 'squeeze':
        if args and isinstance(args[0], list):  # torch 2.x squeeze(tuple): size-1 dims among them
            for d in sorted((d % t.dim() for d in args[0]), reverse=True):
                t = t.squeeze(d)
            return t
        return t.squeeze(*args) if args else t.squeeze()
    if name == 'view':
        return t.view(*args[0])
    if name == 'reshape':
        return t.reshape(*args[0])
    if name == 'flatten':
        return t.flatten(*args)
    if name == 't':
        return t.t()
    if name == 'asStrided':
        return t.as_strided(*args)
    if name == 'expandAs':
        raise ValueError('expandAs needs a tensor')
    if name == 'contiguous':
        return t.contiguous()
    raise ValueError('unknown view ' + name)


def make(s):
    if 'scalar' in s:
        return s['scalar']
    data = [dec_value(v) for v in s['data']]
    t = torch.tensor(data, dtype=torch.float64 if s['dtype'] in FLOATS else None)
    t = t.to(DT[s['dtype']]).reshape(s['shape'])
    for v in s.get('views', []):
        t = apply_view(t, v)
    return t


def make_base(s):
    """The contiguous base tensor and the (view) input built from it."""
    data = [dec_value(v) for v in s['data']]
    base = torch.tensor(data, dtype=torch.float64 if s['dtype'] in FLOATS else None).to(DT[s['dtype']])
    base = base.reshape(s['shape'])
    t = base
    for v in s.get('views', []):
        t = apply_view(t, v)
    return base, t


def out(t):
    if isinstance(t, (tuple, list)):
        return [out(x) for x in t]
    if not isinstance(t, torch.Tensor):
        return {'scalar': enc_value(t)}
    d = t.detach()
    if d.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        flat = d.double().flatten().tolist()
        # shortest digits that still round-trip to the same value in the tensor's dtype
        digits = {torch.float32: 9, torch.float16: 5, torch.bfloat16: 4}.get(d.dtype)
        if digits:
            flat = [float('%.*g' % (digits, v)) if math.isfinite(v) else v for v in flat]
    else:
        flat = d.flatten().tolist()
    return {'dtype': DT_NAME[d.dtype], 'shape': list(d.shape), 'data': [enc_value(v) for v in flat]}


def half_fallback_needed(e):
    m = str(e)
    return "not implemented for 'Half'" in m or "not implemented for 'BFloat16'" in m


def upcast(x):
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16):
        return x.float()
    return x


def compute(fn, inputs, force_fp32=False):
    """fn(*inputs); where torch 1.13 lacks the half kernel (or force_fp32: matmul, whose 1.13
    bfloat16 CPU path accumulates in bfloat16), float32 then rounded."""
    has_half = any(isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16) for x in inputs)
    if not (force_fp32 and has_half):
        try:
            return fn(*inputs), False
        except RuntimeError as e:
            if not half_fallback_needed(e):
                raise
    halves = {x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16)}
    r = fn(*[upcast(x) for x in inputs])
    target = halves.pop() if len(halves) == 1 else torch.float32

    def down(t):
        if isinstance(t, (tuple, list)):
            return type(t)(down(x) for x in t)
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
            return t.to(target)
        return t
    return down(r), True


def err(e):
    return {'type': type(e).__name__, 'message': str(e).split('\n')[0]}


# ---------------------------------------------------------------------------------------------
# case collection

def pycall(op, inputs, kwargs, form):
    """Calls the torch counterpart of kindling op `op` (JS name) with JS-style kwargs."""
    kw = {}
    for k, v in (kwargs or {}).items():
        if k == 'roundingMode':
            kw['rounding_mode'] = v
        elif k == 'dtype':
            kw['dtype'] = DT[v]
        else:
            kw[k] = v
    tname = {'expandAs': 'expand_as', 'asStrided': 'as_strided'}.get(op, op)
    if form == 'inplace':
        return getattr(inputs[0], tname + '_')(*inputs[1:], **kw)
    if form == 'method':
        return getattr(inputs[0], tname)(*inputs[1:], **kw)
    if op == 'max.dim':
        return torch.max(*inputs, **kw)
    return getattr(torch, tname)(*inputs, **kw)


def arg_of(a):
    """A JSON arg: tensor spec, {"scalar": v}, or a plain value (int, list, ...) -> torch value."""
    if isinstance(a, dict) and ('dtype' in a or 'scalar' in a):
        return make(a)
    return a


def case(cases, name, op, args, kwargs=None, form='function', fallback_ok=True, note=None):
    c = {'name': name, 'op': op, 'form': form, 'args': args}
    if kwargs:
        c['kwargs'] = kwargs
    if note:
        c['note'] = note
    try:
        if form == 'inplace':
            base, self_ = make_base(args[0])
            rest = [arg_of(a) for a in args[1:]]
            try:
                r = pycall(op, [self_] + rest, kwargs, 'inplace')
            except RuntimeError as e:
                if not (fallback_ok and half_fallback_needed(e)):
                    raise
                base, self_ = make_base(args[0])
                res, _ = compute(lambda *xs: pycall(op, list(xs), kwargs, 'function'), [self_] + rest)
                self_.copy_(res)
                r = self_
            c['expected'] = out(r)
            c['expectedBase'] = out(base)
        else:
            inputs = [arg_of(a) for a in args]
            fn = lambda *xs: pycall(op, list(xs), kwargs, form)
            if fallback_ok:
                r, fb = compute(fn, inputs, force_fp32=op in ('matmul', 'mm', 'bmm', 'sum', 'mean'))
                if fb:
                    c['halfFallback'] = True
            else:
                r = fn(*inputs)
            if isinstance(r, tuple):
                c['expected'] = out(list(r))
                c['tuple'] = True
            else:
                c['expected'] = out(r)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        c['error'] = err(e)
    cases.append(c)
    return c


def sc(v):
    return {'scalar': v}


# ---------------------------------------------------------------------------------------------
# pointwise

UNARY = ['neg', 'abs', 'exp', 'log', 'sqrt', 'relu', 'sigmoid', 'tanh']
BINARY = ['add', 'sub', 'mul', 'div', 'pow', 'eq', 'ne', 'lt', 'le', 'gt', 'ge']


def gen_pointwise():
    cases = []
    # unary x dtypes, contiguous 2-D, plus a non-contiguous input and specials
    for op in UNARY:
        for dt in ALL:
            kind = 'positive' if op in ('log', 'sqrt') and dt in FLOATS else 'default'
            case(cases, f'{op} {dt} [2,3]', op, [spec(dt, [2, 3], kind=kind)])
        for dt in ['float32', 'float64']:
            case(cases, f'{op} {dt} specials', op, [spec(dt, [len(SPECIALS)], SPECIALS)])
            case(cases, f'{op} {dt} transposed [3,4]^T', op,
                 [spec(dt, [3, 4], kind='positive' if op in ('log', 'sqrt') else 'default', views=[['transpose', 0, 1]])],
                 form='method')
        case(cases, f'{op} float32 0-d', op, [spec('float32', [], [0.75])], form='method')
        case(cases, f'{op} float32 empty [0,3]', op, [spec('float32', [0, 3], [])])
        case(cases, f'{op} int32 step-2 slice', op, [spec('int32', [8], views=[['slice', 0, 1, 8, 2]])], form='method')
        # in-place: same dtype; on a transposed view of a base (writes must reach the base)
        for dt in ['float32', 'float64', 'bfloat16']:
            case(cases, f'{op}_ {dt} [2,3]', op, [spec(dt, [2, 3], kind='positive' if op in ('log', 'sqrt') else 'default')],
                 form='inplace')
        case(cases, f'{op}_ float32 on transposed view', op,
             [spec('float32', [3, 2], kind='positive' if op in ('log', 'sqrt') else 'default', views=[['transpose', 0, 1]])],
             form='inplace')
        case(cases, f'{op}_ int32 (float result cannot be cast back?)', op, [spec('int32', [4], kind='positive')], form='inplace')

    # binary: same dtype, broadcast shapes, every dtype
    shapes = [([2, 3], [2, 3]), ([2, 3], [3]), ([4, 1], [1, 5]), ([2, 1, 3], [4, 1]), ([], [2, 2]), ([0, 3], [3]), ([3], [])]
    for op in BINARY:
        for dt in ALL:
            for sa, sb in shapes[:3] if dt not in ('float32', 'int64') else shapes:
                kb = 'nonzero' if op == 'div' else ('positive' if op == 'pow' and dt in INTS else 'default')
                ka = 'positive' if op == 'pow' and dt in FLOATS else 'default'
                if op == 'pow' and dt in INTS:
                    # keep integer powers small: exponents 0..3
                    b = spec(dt, sb, [rng.int(0, 3) for _ in range(numel(sb))])
                else:
                    b = spec(dt, sb, kind=kb)
                case(cases, f'{op} {dt} {sa}x{sb}', op, [spec(dt, sa, kind=ka), b],
                     form='method' if len(cases) % 2 else 'function')
        # float specials against each other (all 144 pairs)
        n = len(SPECIALS)
        a = [SPECIALS[i] for i in range(n) for j in range(n)]
        b = [SPECIALS[j] for i in range(n) for j in range(n)]
        case(cases, f'{op} float32 specials x specials', op, [spec('float32', [n * n], a), spec('float32', [n * n], b)])
        # non-contiguous operands
        case(cases, f'{op} float32 transposed x contiguous', op,
             [spec('float32', [3, 4], kind='positive', views=[['transpose', 0, 1]]), spec('float32', [4, 3], kind='nonzero')])
        case(cases, f'{op} float64 expanded x step-sliced', op,
             [spec('float64', [1, 3], kind='positive', views=[['expand', [4, 3]]]),
              spec('float64', [4, 6], kind='nonzero', views=[['slice', 1, 0, 6, 2]])])
        case(cases, f'{op} int64 permuted 3-D', op,
             [spec('int64', [2, 3, 4], kind='positive', views=[['permute', [2, 0, 1]]]),
              spec('int64', [4, 2, 3], [rng.int(1, 3) for _ in range(24)])])
        # scalars: int-valued and fractional JS numbers, booleans
        for dt in ['float32', 'float16', 'int32', 'int64', 'uint8', 'bool']:
            kind = 'positive' if op == 'pow' else 'default'
            for s in ([2, 2.5, True] if op != 'pow' or dt != 'bool' else [2]):
                case(cases, f'{op} {dt} tensor x scalar {s}', op, [spec(dt, [5], kind=kind), sc(s)],
                     form='method' if len(cases) % 2 else 'function')
        case(cases, f'{op} float64 0-d x float32 [3]', op, [spec('float64', [], [1.5]), spec('float32', [3], kind='positive')])
        case(cases, f'{op} int32 [3] x float64 0-d', op, [spec('int32', [3], kind='positive'), spec('float64', [], [2.5])])
        # mixed dtypes (values + promotion)
        for da, db in [('uint8', 'int8'), ('int32', 'float32'), ('float16', 'bfloat16'), ('int64', 'float64'),
                       ('bool', 'int32'), ('float16', 'float32'), ('int16', 'uint8'), ('bool', 'float16')]:
            ka = 'positive' if op == 'pow' else 'default'
            if op == 'pow' and db in INTS:
                b = spec(db, [2, 3], [rng.int(0, 3) for _ in range(6)])
            else:
                b = spec(db, [2, 3], kind='nonzero' if op == 'div' else ('positive' if op == 'pow' else 'default'))
            case(cases, f'{op} {da} x {db}', op, [spec(da, [2, 3], kind=ka), b])
        # in-place: same dtype, broadcast other, scalar, on a view, and casts that must fail
        case(cases, f'{op}_ float32 [2,3] x [3]', op, [spec('float32', [2, 3], kind='positive'), spec('float32', [3], kind='nonzero')],
             form='inplace')
        case(cases, f'{op}_ float32 on transposed view x [2]', op,
             [spec('float32', [2, 3], kind='positive', views=[['transpose', 0, 1]]), spec('float32', [2], kind='nonzero')],
             form='inplace')
        case(cases, f'{op}_ int32 x scalar 3', op, [spec('int32', [4], kind='positive'), sc(3)], form='inplace')
        case(cases, f'{op}_ int32 x scalar 2.5', op, [spec('int32', [4], kind='positive'), sc(2.5)], form='inplace')
        case(cases, f'{op}_ float32 [3] x [2,3] (broadcast to a bigger shape)', op,
             [spec('float32', [3], kind='positive'), spec('float32', [2, 3], kind='nonzero')], form='inplace')
        case(cases, f'{op}_ float64 x float32 (other casts down)', op,
             [spec('float64', [3], kind='positive'), spec('float32', [3], kind='nonzero')], form='inplace')
        case(cases, f'{op}_ float32 x int64 tensor', op,
             [spec('float32', [3], kind='positive'), spec('int64', [3], [1, 2, 3])], form='inplace')

    # alpha, rounding modes
    for dt in ['float32', 'float64', 'int32', 'int64', 'bfloat16']:
        a = spec(dt, [6], kind='default')
        b = spec(dt, [6], kind='nonzero')
        case(cases, f'add {dt} alpha=2', 'add', [a, b], {'alpha': 2})
        case(cases, f'sub {dt} alpha=3', 'sub', [a, b], {'alpha': 3}, form='method')
        if dt in FLOATS:
            case(cases, f'add {dt} alpha=0.5', 'add', [a, b], {'alpha': 0.5})
        for mode in ['trunc', 'floor']:
            case(cases, f'div {dt} roundingMode={mode}', 'div', [a, b], {'roundingMode': mode})
            case(cases, f'div_ {dt} roundingMode={mode}', 'div', [a, b], {'roundingMode': mode}, form='inplace')
            case(cases, f'div {dt} scalar -3 roundingMode={mode}', 'div', [a, sc(-3)], {'roundingMode': mode}, form='method')
    case(cases, 'add int32 alpha=2.5 (error)', 'add', [spec('int32', [3]), spec('int32', [3])], {'alpha': 2.5})
    case(cases, 'div int32 -7/2 floor and trunc', 'div', [spec('int32', [4], [-7, 7, -8, 9]), spec('int32', [4], [2, -2, 3, -4])],
         {'roundingMode': 'floor'})
    case(cases, 'div int32 -7/2 trunc', 'div', [spec('int32', [4], [-7, 7, -8, 9]), spec('int32', [4], [2, -2, 3, -4])],
         {'roundingMode': 'trunc'})
    case(cases, 'div int64 / int64 -> float32', 'div', [spec('int64', [4], [1, -7, 9, 0]), spec('int64', [4], [2, 2, -4, 3])])
    case(cases, 'div float32 by zero', 'div', [spec('float32', [3], [1, -1, 0]), spec('float32', [3], [0, 0, 0])])
    case(cases, 'div bad roundingMode', 'div', [spec('float32', [3]), spec('float32', [3], kind='nonzero')], {'roundingMode': 'round'})
    case(cases, 'uint8 + (-1) wraps', 'add', [spec('uint8', [3], [0, 1, 200]), sc(-1)])
    case(cases, 'uint8 neg wraps', 'neg', [spec('uint8', [3], [0, 1, 200])])
    case(cases, 'int32 pow negative int exponent (error)', 'pow', [spec('int32', [3], [1, 2, 3]), sc(-1)])
    case(cases, 'int32 pow 0.5 -> float32', 'pow', [spec('int32', [3], [1, 4, 9]), sc(0.5)])
    case(cases, 'float32 pow negative base fractional -> nan', 'pow', [spec('float32', [3], [-2, 0, 2]), sc(0.5)])
    case(cases, 'float32 pow 0^0', 'pow', [spec('float32', [2], [0, 0]), spec('float32', [2], [0, -1])])
    case(cases, 'sub bool - bool (error)', 'sub', [spec('bool', [2], [True, False]), spec('bool', [2], [True, True])])
    case(cases, 'add bool + bool -> bool', 'add', [spec('bool', [4], [True, False, True, False]), spec('bool', [4], [True, True, False, False])])
    case(cases, 'mul bool * bool -> bool', 'mul', [spec('bool', [4], [True, False, True, False]), spec('bool', [4], [True, True, False, False])])
    case(cases, 'eq NaN', 'eq', [spec('float32', [3], [float('nan'), 1, 2]), spec('float32', [3], [float('nan'), 1, 3])])
    case(cases, 'add broadcast mismatch (error)', 'add', [spec('float32', [2, 3]), spec('float32', [4])])
    case(cases, 'mul broadcast mismatch 3-D (error)', 'mul', [spec('float32', [2, 3, 4]), spec('float32', [3, 3, 1])])

    # where
    for dt in ['float32', 'int64', 'float16', 'bool']:
        case(cases, f'where {dt} [2,3] broadcast cond [3]', 'where',
             [spec('bool', [3]), spec(dt, [2, 3]), spec(dt, [2, 3])])
    case(cases, 'where cond [2,1] x [1,3] x []', 'where', [spec('bool', [2, 1]), spec('float32', [1, 3]), spec('float32', [], [0.5])])
    case(cases, 'where scalar other', 'where', [spec('bool', [4]), spec('float32', [4]), sc(0)])
    case(cases, 'where scalar both (int)', 'where', [spec('bool', [4]), sc(1), sc(0)], note='torch: int64 for two int scalars')
    case(cases, 'where scalar both (float)', 'where', [spec('bool', [4]), sc(1.5), sc(-1)], note='torch: float32 default dtype')
    case(cases, 'where mixed dtypes int32/float64 promote', 'where', [spec('bool', [4]), spec('int32', [4]), spec('float64', [4])])
    case(cases, 'where transposed cond', 'where',
         [spec('bool', [3, 2], views=[['transpose', 0, 1]]), spec('float32', [2, 3]), spec('float32', [2, 3])])
    case(cases, 'where non-bool cond (error)', 'where', [spec('float32', [3]), spec('float32', [3]), spec('float32', [3])])
    case(cases, 'where shape mismatch (error)', 'where', [spec('bool', [3]), spec('float32', [2]), spec('float32', [3])])

    # edge cases
    case(cases, 'where int32 tensor x scalar 2.5 -> float32', 'where', [spec('bool', [4]), spec('int32', [4]), sc(2.5)])
    case(cases, 'where int32 tensor x scalar 2 -> int32', 'where', [spec('bool', [4]), spec('int32', [4]), sc(2)])
    case(cases, 'where float16 0-d x float32 [3]', 'where', [spec('bool', [3]), spec('float16', [], [0.5]), spec('float32', [3])])
    case(cases, 'where empty', 'where', [spec('bool', [0], []), spec('float32', [0], []), spec('float32', [1], [2])])
    case(cases, 'add 0-d + 0-d', 'add', [spec('float32', [], [1.5]), spec('float32', [], [2.25])])
    case(cases, 'add [0] + [1]', 'add', [spec('float32', [0], []), spec('float32', [1], [2])])
    case(cases, 'add [0] + [2] (error)', 'add', [spec('float32', [0], []), spec('float32', [2], [2, 3])])
    case(cases, 'add [2,0,3] + [1,3]', 'add', [spec('float32', [2, 0, 3], []), spec('float32', [1, 3])])
    case(cases, 'uint8 > -1 (wrapped scalar cast to uint8)', 'gt', [spec('uint8', [3], [0, 1, 255]), sc(-1)])
    case(cases, 'uint8 == 257', 'eq', [spec('uint8', [3], [1, 2, 255]), sc(257)])
    case(cases, 'int32 lt 2.5', 'lt', [spec('int32', [4], [1, 2, 3, -5]), sc(2.5)])
    case(cases, 'int64 eq float32 tensor', 'eq', [spec('int64', [3], [1, 2, 3]), spec('float32', [3], [1, 2.5, 3])])
    case(cases, 'bool lt int8', 'lt', [spec('bool', [3], [True, False, True]), spec('int8', [3], [1, 1, 2])])
    case(cases, 'float16 exp overflow -> inf', 'exp', [spec('float16', [3], [10, 11, 12])])
    case(cases, 'float16 mul overflow -> inf', 'mul', [spec('float16', [2], [300, -300]), spec('float16', [2], [300, 300])])
    case(cases, 'bfloat16 add keeps range', 'add', [spec('bfloat16', [2], [1e30, -1e30]), spec('bfloat16', [2], [1e30, 1])])
    case(cases, 'sigmoid float32 extremes', 'sigmoid', [spec('float32', [6], [-100, -30, -10, 10, 30, 100])])
    case(cases, 'tanh float64 extremes', 'tanh', [spec('float64', [5], [-40, -1e-10, 0, 1e-10, 40])])
    case(cases, 'exp float64 extremes', 'exp', [spec('float64', [4], [-800, -1e-300, 700, 710])])
    case(cases, 'log float32 subnormal/tiny', 'log', [spec('float32', [3], [1e-40, 1e-30, 3.4e38])])
    case(cases, 'int32 + int32 overflow wraps', 'add', [spec('int32', [2], [2147483647, -2147483648]), spec('int32', [2], [1, -1])])
    case(cases, 'int8 * int8 wraps', 'mul', [spec('int8', [2], [100, -100]), spec('int8', [2], [3, 3])])
    case(cases, 'uint8 - uint8 wraps', 'sub', [spec('uint8', [2], [1, 0]), spec('uint8', [2], [2, 1])])
    case(cases, 'int32 abs of INT_MIN', 'abs', [spec('int32', [2], [-2147483648, -5])])
    case(cases, 'int64 pow int64 large', 'pow', [spec('int64', [3], [2, 3, -2]), spec('int64', [3], [40, 20, 31])])
    case(cases, 'int32 pow 0 exponent', 'pow', [spec('int32', [3], [0, -3, 7]), sc(0)])
    case(cases, 'float32 pow int tensor exponent', 'pow', [spec('float32', [3], [2, -2, 0.5]), spec('int32', [3], [3, 3, -2])])
    case(cases, 'int32 pow float tensor -> float32', 'pow', [spec('int32', [3], [2, 4, 9]), spec('float32', [3], [0.5, -1, 1.5])])
    case(cases, 'pow float32 scalar -1, 2, 0.5, 3', 'pow', [spec('float32', [4], [2, -3, 4, 0]), spec('float32', [4], [-1, 2, 0.5, 3])])
    case(cases, 'div float floor with negative zero and inf', 'div',
         [spec('float32', [6], [5, -5, 0, float('inf'), 1, -7.5]), spec('float32', [6], [float('inf'), float('inf'), -3, 2, 0, 2])],
         {'roundingMode': 'floor'})
    case(cases, 'div float trunc with inf and zero', 'div',
         [spec('float32', [5], [5, -5, float('inf'), 1, -7.5]), spec('float32', [5], [float('inf'), 2, 2, 0, 2])],
         {'roundingMode': 'trunc'})
    case(cases, 'div int64 floor negative', 'div', [spec('int64', [4], [-1, 1, -9, 9]), spec('int64', [4], [3, -3, -4, 4])],
         {'roundingMode': 'floor'})
    case(cases, 'div uint8 / uint8 -> float32', 'div', [spec('uint8', [3], [1, 200, 7]), spec('uint8', [3], [2, 3, 7])])
    case(cases, 'div bool / bool -> float32', 'div', [spec('bool', [2], [True, False]), spec('bool', [2], [True, True])])
    case(cases, 'add float32 + float64 0-d scalar tensor alpha', 'add', [spec('float32', [2], [1, 2]), spec('float64', [], [0.1])],
         {'alpha': 3})
    case(cases, 'add int64 big alpha', 'add', [spec('int64', [2], [1, 2]), spec('int64', [2], [3, 4])], {'alpha': -1000000})
    case(cases, 'mul bool * float scalar', 'mul', [spec('bool', [3], [True, False, True]), sc(2.5)])
    case(cases, 'add_ uint8 with int scalar 300 wraps', 'add', [spec('uint8', [2], [1, 2]), sc(300)], form='inplace')
    case(cases, 'mul_ float16 by float scalar', 'mul', [spec('float16', [3], [1, 2, 3]), sc(0.1)], form='inplace')
    case(cases, 'relu_ int64', 'relu', [spec('int64', [3], [-1, 0, 5])], form='inplace')
    case(cases, 'neg_ on expanded-then-contiguous', 'neg', [spec('float32', [1, 3], views=[['expand', [2, 3]], ['contiguous']])], form='inplace')
    case(cases, 'eq_ float32 in place gives 0/1 floats', 'eq', [spec('float32', [3], [1, 2, 3]), spec('float32', [3], [1, 0, 3])], form='inplace')
    case(cases, 'lt_ int32 in place', 'lt', [spec('int32', [3], [1, 2, 3]), sc(2)], form='inplace')
    case(cases, 'where cond 0-d', 'where', [spec('bool', [], [True]), spec('float32', [2, 2]), spec('float32', [2, 2])])
    case(cases, 'where 3-way broadcast', 'where', [spec('bool', [2, 1, 1]), spec('float64', [1, 3, 1]), spec('float64', [1, 1, 4])])
    return cases


# ---------------------------------------------------------------------------------------------
# reductions

def gen_reductions():
    cases = []
    for dt in ALL:
        x = spec(dt, [3, 4], kind='distinct' if dt in INTS else 'default')
        for op in ['sum', 'mean']:
            case(cases, f'{op} {dt} all', op, [x])
            case(cases, f'{op} {dt} dim=1', op, [x, 1], form='method')
            case(cases, f'{op} {dt} dim=0 keepdim', op, [x, 0, True])
            case(cases, f'{op} {dt} dtype=float64', op, [x], {'dtype': 'float64'})
        for op in ['max', 'min', 'argmax']:
            case(cases, f'{op} {dt} all', op, [x], form='method')
            if op == 'argmax':
                case(cases, f'argmax {dt} dim=1', 'argmax', [x, 1])
                case(cases, f'argmax {dt} dim=0 keepdim', 'argmax', [x, 0, True], form='method')
            else:
                case(cases, f'{op} {dt} dim=1', op, [x, 1])
                case(cases, f'{op} {dt} dim=-2 keepdim', op, [x, -2, True], form='method')
    x3 = spec('float32', [2, 3, 4])
    for op in ['sum', 'mean']:
        case(cases, f'{op} float32 dims [0,2]', op, [x3, [0, 2]])
        case(cases, f'{op} float32 dims [-1,0] keepdim', op, [x3, [-1, 0], True])
        case(cases, f'{op} float32 dim list [] (all)', op, [x3, []], note='torch: empty dim list reduces all dims')
        case(cases, f'{op} float32 transposed dim 0', op, [spec('float32', [3, 5], views=[['transpose', 0, 1]]), 0])
        case(cases, f'{op} float64 expanded', op, [spec('float64', [1, 4], views=[['expand', [3, 4]]]), 0])
        case(cases, f'{op} float32 empty [0,3] all', op, [spec('float32', [0, 3], [])])
        case(cases, f'{op} float32 empty [0,3] dim 0', op, [spec('float32', [0, 3], [])], {'dim': 0})
        case(cases, f'{op} float32 0-d', op, [spec('float32', [], [2.5])])
        case(cases, f'{op} float32 0-d dim 0', op, [spec('float32', [], [2.5]), 0])
        case(cases, f'{op} float32 with NaN', op, [spec('float32', [4], [1, float('nan'), 2, 3])])
        case(cases, f'{op} float32 with inf', op, [spec('float32', [3], [1, float('inf'), 2])])
        case(cases, f'{op} float32 dim out of range (error)', op, [x3, 3])
        case(cases, f'{op} float32 repeated dim (error)', op, [x3, [1, 1]])
        case(cases, f'{op} keepdim options object', op, [spec('float32', [2, 3])], {'dim': 1, 'keepdim': True})
    case(cases, 'sum int32 dtype=int32', 'sum', [spec('int32', [5])], {'dtype': 'int32'})
    case(cases, 'sum float32 large (accuracy)', 'sum', [spec('float32', [4096], [((i * 37) % 1000) / 997.0 for i in range(4096)])])
    case(cases, 'sum float16 large (float accumulation)', 'sum', [spec('float16', [2048], [1.0 + (i % 7) / 8.0 for i in range(2048)])])
    case(cases, 'mean bfloat16 large', 'mean', [spec('bfloat16', [1000], [0.5 + (i % 5) / 4.0 for i in range(1000)])])
    case(cases, 'mean int64 dtype=float32', 'mean', [spec('int64', [6])], {'dtype': 'float32'})
    for op in ['max', 'min', 'argmax']:
        case(cases, f'{op} float32 with NaN', op, [spec('float32', [4], [1, float('nan'), 5, 3])])
        case(cases, f'{op} float32 with -inf/inf', op, [spec('float32', [3], [float('-inf'), 2, float('inf')])])
        case(cases, f'{op} float32 empty (error)', op, [spec('float32', [0, 3], [])])
        case(cases, f'{op} float32 0-d', op, [spec('float32', [], [4.5])])
        case(cases, f'{op} float32 transposed', op, [spec('float32', [3, 4], views=[['transpose', 0, 1]])])
        case(cases, f'{op} float32 ties (first index)', op, [spec('float32', [2, 4], [1, 3, 3, 0, 5, 5, 5, 5]), 1])
        case(cases, f'{op} float32 dim with NaN', op, [spec('float32', [2, 3], [1, float('nan'), 2, 4, 0, 3]), 1])
        case(cases, f'{op} float32 dim out of range (error)', op, [spec('float32', [2, 3]), 2])
        case(cases, f'{op} float32 empty along other dim', op, [spec('float32', [0, 3], []), 1])
        case(cases, f'{op} float32 0-d dim 0', op, [spec('float32', [], [4.5]), 0])
        case(cases, f'{op} float32 [3,4,2] dim 1', op, [spec('float32', [3, 4, 2]), 1])
        case(cases, f'{op} float32 permuted [2,3,4] dim 2', op, [spec('float32', [2, 3, 4], views=[['permute', [1, 2, 0]]]), 2])
    case(cases, 'max float32 [2,3] dim via options', 'max', [spec('float32', [2, 3])], {'dim': 1, 'keepdim': True},
         note='max.dim selected by the options object')
    # edge cases
    case(cases, 'sum int32 near overflow accumulates in int64', 'sum', [spec('int32', [4], [2147483647] * 4)])
    case(cases, 'sum uint8 255 x 1000', 'sum', [spec('uint8', [1000], [255] * 1000)])
    case(cases, 'sum bool counts', 'sum', [spec('bool', [2, 3], [True, False, True, True, True, False]), 1])
    case(cases, 'mean float16 of large values (float accumulation)', 'mean', [spec('float16', [1000], [1000] * 1000)])
    case(cases, 'sum float16 overflow -> inf', 'sum', [spec('float16', [100], [1000] * 100)])
    case(cases, 'mean bfloat16 dim', 'mean', [spec('bfloat16', [4, 300], [((i * 13) % 17) / 4 for i in range(1200)]), 1])
    case(cases, 'max over zero-size dim (error)', 'max', [spec('float32', [0, 3], []), 0])
    case(cases, 'argmax over zero-size dim (error)', 'argmax', [spec('float32', [0, 3], []), 0])
    case(cases, 'argmax keepdim without dim', 'argmax', [spec('float32', [2, 3])], {'keepdim': True})
    case(cases, 'sum keepdim 0-d', 'sum', [spec('float32', [], [3]), 0, True])
    case(cases, 'sum dims -1 and 1 of 2-D (error: repeated)', 'sum', [spec('float32', [2, 3]), [-1, 1]])
    case(cases, 'max bool', 'max', [spec('bool', [3], [False, True, False])])
    case(cases, 'min bool dim', 'min', [spec('bool', [2, 2], [True, False, True, True]), 1])
    case(cases, 'max int8 dim keepdim', 'max', [spec('int8', [2, 3], [-128, 127, 0, 5, -5, 0]), 1, True])
    case(cases, 'argmax int64 all equal -> 0', 'argmax', [spec('int64', [5], [7, 7, 7, 7, 7])])
    case(cases, 'max float32 -inf only', 'max', [spec('float32', [2], [float('-inf'), float('-inf')])])
    case(cases, 'max float64 large non-contiguous dim 0', 'max',
         [spec('float64', [40, 30], [((i * 7919) % 1201) - 600.0 for i in range(1200)], views=[['transpose', 0, 1]]), 0])
    case(cases, 'sum float32 large transposed dim 1', 'sum',
         [spec('float32', [64, 100], [((i * 31) % 97) / 10.0 for i in range(6400)], views=[['transpose', 0, 1]]), 1])
    case(cases, 'mean float64 3-D dims [0,2] keepdim', 'mean', [spec('float64', [3, 4, 5]), [0, 2], True])
    case(cases, 'sum float32 expanded all', 'sum', [spec('float32', [1, 5], [1, 2, 3, 4, 5], views=[['expand', [1000, 5]]])])
    for c in cases:
        if c['op'] in ('max', 'min') and len(c['args']) > 1 or (c['op'] in ('max', 'min') and 'dim' in c.get('kwargs', {})):
            c['tuple'] = 'expected' in c
    return cases


# ---------------------------------------------------------------------------------------------
# matmul

def gen_matmul():
    cases = []
    shapes = [
        ([3], [3]), ([2, 3], [3]), ([3], [3, 4]), ([2, 3], [3, 4]), ([2, 2, 3], [2, 3, 4]), ([2, 2, 3], [3, 4]),
        ([2, 3], [4, 3, 2]), ([3], [2, 3, 4]), ([2, 3, 4], [4]), ([2, 1, 3, 4], [5, 4, 2]), ([1, 4], [4, 1]),
        ([2, 0], [0, 3]), ([0, 3], [3, 2]), ([2, 3], [3, 0]), ([17, 33], [33, 19]), ([3, 1, 4, 5], [2, 5, 3]),
        ([0], [0]),
    ]
    for sa, sb in shapes:
        for dt in ['float32', 'float64', 'int64']:
            if dt != 'float32' and numel(sa) > 100:
                continue
            case(cases, f'matmul {dt} {sa}@{sb}', 'matmul', [spec(dt, sa), spec(dt, sb)],
                 form='method' if len(cases) % 2 else 'function')
    for dt in ['int32', 'float16', 'bfloat16', 'uint8', 'int8', 'int16']:
        case(cases, f'matmul {dt} [2,3]@[3,4]', 'matmul', [spec(dt, [2, 3]), spec(dt, [3, 4])])
        case(cases, f'matmul {dt} [2,2,3]@[3]', 'matmul', [spec(dt, [2, 2, 3]), spec(dt, [3])])
    case(cases, 'matmul float16 [8,64]@[64,8] (fp32 accumulation)', 'matmul',
         [spec('float16', [8, 64], kind='positive'), spec('float16', [64, 8], kind='positive')])
    case(cases, 'matmul bool (error)', 'matmul', [spec('bool', [2, 2]), spec('bool', [2, 2])])
    # non-contiguous operands
    case(cases, 'matmul float32 A^T @ B', 'matmul', [spec('float32', [3, 2], views=[['transpose', 0, 1]]), spec('float32', [3, 4])])
    case(cases, 'matmul float32 A @ B^T', 'matmul', [spec('float32', [2, 3]), spec('float32', [4, 3], views=[['transpose', 0, 1]])])
    case(cases, 'matmul float64 step-sliced A', 'matmul', [spec('float64', [4, 3], views=[['slice', 0, 0, 4, 2]]), spec('float64', [3, 2])])
    case(cases, 'matmul float32 expanded batch', 'matmul',
         [spec('float32', [1, 2, 3], views=[['expand', [4, 2, 3]]]), spec('float32', [4, 3, 2])])
    case(cases, 'matmul float32 permuted batch', 'matmul',
         [spec('float32', [2, 3, 4], views=[['permute', [1, 0, 2]]]), spec('float32', [3, 4, 5], views=[['transpose', 1, 2], ['transpose', 1, 2]])])
    case(cases, 'matmul float32 large 70x130 @ 130x90', 'matmul', [spec('float32', [70, 130]), spec('float32', [130, 90])])
    case(cases, 'matmul float32 with NaN/inf', 'matmul',
         [spec('float32', [2, 2], [float('nan'), 1, 2, 3]), spec('float32', [2, 2], [1, 0, float('inf'), 1])])
    # mm / bmm
    case(cases, 'mm float32', 'mm', [spec('float32', [2, 3]), spec('float32', [3, 4])])
    case(cases, 'mm float64 transposed', 'mm', [spec('float64', [3, 2], views=[['t']]), spec('float64', [3, 4])], form='method')
    case(cases, 'mm int32', 'mm', [spec('int32', [2, 3]), spec('int32', [3, 2])])
    case(cases, 'bmm float32', 'bmm', [spec('float32', [2, 2, 3]), spec('float32', [2, 3, 4])])
    case(cases, 'bmm float64 transposed', 'bmm', [spec('float64', [2, 3, 2], views=[['transpose', 1, 2]]), spec('float64', [2, 3, 1])],
         form='method')
    # errors
    case(cases, 'matmul float32 step-sliced vector', 'matmul', [spec('float32', [3, 4]), spec('float32', [8], views=[['slice', 0, 0, 8, 2]])])
    case(cases, 'matmul float32 vector @ transposed', 'matmul', [spec('float32', [3]), spec('float32', [4, 3], views=[['t']])])
    case(cases, 'matmul float16 long dot (fp32 accumulation)', 'matmul',
         [spec('float16', [2, 2048], [1 + (i % 3) / 4 for i in range(4096)]), spec('float16', [2048, 2], [1 - (i % 5) / 8 for i in range(4096)])])
    case(cases, 'matmul bfloat16 long dot (fp32 accumulation)', 'matmul',
         [spec('bfloat16', [2, 1024], [1 + (i % 3) / 4 for i in range(2048)]), spec('bfloat16', [1024], [1 - (i % 5) / 8 for i in range(1024)])])
    case(cases, 'matmul int64 large values', 'matmul', [spec('int64', [2, 2], [100000, 200000, -300000, 400000]), spec('int64', [2, 2], [50000, 1, 2, -60000])])
    case(cases, 'matmul int32 wraps', 'matmul', [spec('int32', [1, 2], [65536, 65536]), spec('int32', [2, 1], [65536, 65536])])
    case(cases, 'bmm float32 zero batch', 'bmm', [spec('float32', [0, 2, 3], []), spec('float32', [0, 3, 4], [])])
    case(cases, 'matmul [1,1,2,3] @ [4,3,5] broadcast', 'matmul', [spec('float32', [1, 1, 2, 3]), spec('float32', [4, 3, 5])])
    case(cases, 'matmul [2,3] @ [3] float64 transposed matrix', 'matmul', [spec('float64', [3, 2], views=[['t']]), spec('float64', [3])])
    case(cases, 'mm shape mismatch (error)', 'mm', [spec('float32', [2, 3]), spec('float32', [4, 5])])
    case(cases, 'mm 1-D (error)', 'mm', [spec('float32', [3]), spec('float32', [3, 2])])
    case(cases, 'mm dtype mismatch (error)', 'mm', [spec('float32', [2, 3]), spec('float64', [3, 2])])
    case(cases, 'bmm batch mismatch (error)', 'bmm', [spec('float32', [2, 2, 3]), spec('float32', [3, 3, 4])])
    case(cases, 'bmm 2-D (error)', 'bmm', [spec('float32', [2, 3]), spec('float32', [3, 4])])
    case(cases, 'bmm inner mismatch (error)', 'bmm', [spec('float32', [2, 2, 3]), spec('float32', [2, 4, 4])])
    case(cases, 'matmul 0-d (error)', 'matmul', [spec('float32', [], [1]), spec('float32', [3])])
    case(cases, 'matmul inner mismatch (error)', 'matmul', [spec('float32', [2, 3]), spec('float32', [4])])
    case(cases, 'matmul 1-D length mismatch (error)', 'matmul', [spec('float32', [3]), spec('float32', [4])])
    case(cases, 'matmul batch mismatch (error)', 'matmul', [spec('float32', [2, 2, 3]), spec('float32', [3, 3, 4])])
    case(cases, 'matmul dtype mismatch (error)', 'matmul', [spec('float32', [2, 3]), spec('int64', [3, 2])])
    return cases


# ---------------------------------------------------------------------------------------------
# views

def view_case(cases, name, base, ops):
    c = {'name': name, 'base': base, 'ops': ops}
    try:
        b = make(base)
        t = b
        for o in ops:
            if o[0] == 'getitem':
                t = t[o[1]]
            elif o[0] in ('chunk', 'split'):
                t = getattr(t, o[0])(*o[1:])
            else:
                t = apply_view(t, o)
        c['expected'] = out(t)
        c['stride'] = list(t.stride())
        c['storageOffset'] = t.storage_offset()
        c['contiguous'] = t.is_contiguous()
        shares = t.numel() > 0 and t.storage().data_ptr() == b.storage().data_ptr()
        c['sharesStorage'] = shares
        if t.numel() > 0:
            fill = True if base['dtype'] == 'bool' else -1
            t.fill_(fill)
            c['fillValue'] = fill
            c['baseAfterFill'] = out(b)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        c['error'] = err(e)
    cases.append(c)


def arange_spec(dtype, shape):
    return spec(dtype, shape, list(range(numel(shape))))


def gen_views():
    cases = []
    b23 = arange_spec('float32', [2, 3])
    b234 = arange_spec('float32', [2, 3, 4])
    b46 = arange_spec('int32', [4, 6])
    view_case(cases, 'view [3,2]', b23, [['view', [3, 2]]])
    view_case(cases, 'view [-1]', b234, [['view', [-1]]])
    view_case(cases, 'view [4,-1,3]', b234, [['view', [4, -1, 3]]])
    view_case(cases, 'view of transposed (error)', b23, [['t'], ['view', [6]]])
    view_case(cases, 'view of transposed, compatible split', b234, [['transpose', 1, 2], ['view', [2, 2, 2, 3]]])
    view_case(cases, 'view two -1 (error)', b23, [['view', [-1, -1]]])
    view_case(cases, 'view wrong numel (error)', b23, [['view', [4, 2]]])
    view_case(cases, 'reshape contiguous (view)', b234, [['reshape', [6, 4]]])
    view_case(cases, 'reshape transposed (copy)', b23, [['t'], ['reshape', [6]]])
    view_case(cases, 'reshape invalid (error)', b23, [['reshape', [4, 4]]])
    view_case(cases, 'flatten', b234, [['flatten']])
    view_case(cases, 'flatten 1..2', b234, [['flatten', 1, 2]])
    view_case(cases, 'flatten 0-d', spec('float32', [], [7]), [['flatten']])
    view_case(cases, 'transpose 0,2', b234, [['transpose', 0, 2]])
    view_case(cases, 'transpose -1,-2', b234, [['transpose', -1, -2]])
    view_case(cases, 't 2-D', b23, [['t']])
    view_case(cases, 't 1-D', arange_spec('float32', [4]), [['t']])
    view_case(cases, 't 3-D (error)', b234, [['t']])
    view_case(cases, 'permute [2,0,1]', b234, [['permute', [2, 0, 1]]])
    view_case(cases, 'permute negative dims', b234, [['permute', [-1, 0, 1]]])
    view_case(cases, 'permute duplicate (error)', b234, [['permute', [0, 0, 1]]])
    view_case(cases, 'permute wrong length (error)', b234, [['permute', [0, 1]]])
    view_case(cases, 'narrow dim 1', b46, [['narrow', 1, 2, 3]])
    view_case(cases, 'narrow negative start', b46, [['narrow', 0, -2, 2]])
    view_case(cases, 'narrow out of range (error)', b46, [['narrow', 1, 4, 3]])
    view_case(cases, 'select 0 1', b234, [['select', 0, 1]])
    view_case(cases, 'select 2 -1', b234, [['select', 2, -1]])
    view_case(cases, 'select out of range (error)', b234, [['select', 1, 3]])
    view_case(cases, 'select dim out of range (error)', b234, [['select', 3, 0]])
    view_case(cases, 'slice step 2', b46, [['slice', 1, 0, 6, 2]])
    view_case(cases, 'slice step 3 offset 1', b46, [['slice', 1, 1, 6, 3]])
    view_case(cases, 'slice negative bounds', b46, [['slice', 0, -3, -1, 1]])
    view_case(cases, 'slice end past size clamps', b46, [['slice', 0, 2, 100, 1]])
    view_case(cases, 'slice empty (start >= end)', b46, [['slice', 0, 3, 1, 1]])
    view_case(cases, 'slice step 0 (error)', b46, [['slice', 0, 0, 4, 0]])
    view_case(cases, 'unsqueeze 0', b23, [['unsqueeze', 0]])
    view_case(cases, 'unsqueeze -1', b23, [['unsqueeze', -1]])
    view_case(cases, 'unsqueeze 1 of transposed', b23, [['t'], ['unsqueeze', 1]])
    view_case(cases, 'unsqueeze out of range (error)', b23, [['unsqueeze', 3]])
    b1 = arange_spec('float32', [1, 3, 1, 2])
    view_case(cases, 'squeeze all', b1, [['squeeze']])
    view_case(cases, 'squeeze dim 2', b1, [['squeeze', 2]])
    view_case(cases, 'squeeze dim 1 (not size 1: no-op)', b1, [['squeeze', 1]])
    view_case(cases, 'squeeze dim out of range (error)', b1, [['squeeze', 4]])
    view_case(cases, 'expand [3,4] from [1,4]', arange_spec('float32', [1, 4]), [['expand', [3, 4]]])
    view_case(cases, 'expand -1 and new leading dim', arange_spec('float32', [3, 1]), [['expand', [2, -1, 5]]])
    view_case(cases, 'expand mismatch (error)', b23, [['expand', [2, 4]]])
    view_case(cases, 'asStrided', arange_spec('float32', [12]), [['asStrided', [3, 2], [1, 3], 2]])
    view_case(cases, 'asStrided overlapping', arange_spec('float32', [6]), [['asStrided', [4, 3], [1, 1]]])
    view_case(cases, 'asStrided out of bounds (error)', arange_spec('float32', [6]), [['asStrided', [3, 3], [3, 1]]])
    view_case(cases, 'chunk 3 dim 1 [1]', b46, [['chunk', 3, 1], ['getitem', 1]])
    view_case(cases, 'chunk 4 of 6 -> last', arange_spec('float32', [6]), [['chunk', 4], ['getitem', 2]])
    view_case(cases, 'split 4 dim 1 last', b46, [['split', 4, 1], ['getitem', 1]])
    view_case(cases, 'split [1,3] dim 0 second', b46, [['split', [1, 3], 0], ['getitem', 1]])
    view_case(cases, 'split sizes not summing (error)', b46, [['split', [1, 2], 0]])
    view_case(cases, 'chunk 0 (error)', b46, [['chunk', 0]])
    view_case(cases, 'chain: transpose, slice, select', arange_spec('float64', [3, 4, 5]),
              [['transpose', 0, 2], ['slice', 1, 1, 4, 2], ['select', 2, 1]])
    view_case(cases, 'chain: narrow, permute, unsqueeze, expand', arange_spec('int64', [4, 3]),
              [['narrow', 0, 1, 2], ['permute', [1, 0]], ['unsqueeze', 0], ['expand', [2, 3, 2]]])
    s0 = spec('float32', [], [3])
    view_case(cases, '0-d view [1]', s0, [['view', [1]]])
    view_case(cases, '0-d view [-1]', s0, [['view', [-1]]])
    view_case(cases, '0-d reshape [1,1]', s0, [['reshape', [1, 1]]])
    view_case(cases, '0-d unsqueeze -1', s0, [['unsqueeze', -1]])
    view_case(cases, '0-d squeeze 0', s0, [['squeeze', 0]])
    view_case(cases, '0-d t', s0, [['t']])
    view_case(cases, '0-d permute []', s0, [['permute', []]])
    view_case(cases, '0-d expand [2,3]', s0, [['expand', [2, 3]]])
    view_case(cases, '0-d select (error)', s0, [['select', 0, 0]])
    view_case(cases, '1-D transpose 0,0', arange_spec('float32', [3]), [['transpose', 0, 0]])
    view_case(cases, 'transpose twice is contiguous', b234, [['transpose', 0, 2], ['transpose', 2, 0]])
    view_case(cases, 'narrow length 0', b46, [['narrow', 1, 6, 0]])
    view_case(cases, 'slice start -100 clamps', b46, [['slice', 1, -100, 2, 1]])
    view_case(cases, 'slice start past end -> empty', b46, [['slice', 1, 10, 20, 1]])
    view_case(cases, 'slice step larger than size', b46, [['slice', 1, 1, 6, 10]])
    view_case(cases, 'expand -1 on new leading dim (error)', arange_spec('float32', [2]), [['expand', [-1, 2]]])
    view_case(cases, 'view of expanded splitting a dim', arange_spec('float32', [1, 4]), [['expand', [3, 4]], ['view', [3, 2, 2]]])
    view_case(cases, 'view of expanded merging (error)', arange_spec('float32', [1, 4]), [['expand', [3, 4]], ['view', [12]]])
    view_case(cases, 'reshape of expanded (copy)', arange_spec('float32', [1, 4]), [['expand', [3, 4]], ['reshape', [12]]])
    view_case(cases, 'empty view [0,3] -> [3,0]', spec('float32', [0, 3], []), [['view', [3, 0]]])
    view_case(cases, 'empty reshape [0,-1] (error)', spec('float32', [0, 3], []), [['reshape', [0, -1]]])
    view_case(cases, 'empty view [-1]', spec('float32', [0, 3], []), [['view', [-1]]])
    view_case(cases, 'asStrided on a view uses its storage offset', arange_spec('float32', [2, 3]), [['slice', 1, 1, 3, 1], ['asStrided', [2], [1]]])
    view_case(cases, 'asStrided with explicit offset on a view', arange_spec('float32', [2, 3]), [['select', 0, 1], ['asStrided', [2, 2], [1, 2], 0]])
    view_case(cases, 'chunk 6 into 4 -> 3 chunks, last', arange_spec('float32', [6]), [['chunk', 4], ['getitem', 2]])
    view_case(cases, 'chunk 2 into 5 -> 2 chunks', arange_spec('float32', [2]), [['chunk', 5], ['getitem', 1]])
    view_case(cases, 'split [0,4] first is empty', arange_spec('float32', [4]), [['split', [0, 4]], ['getitem', 1]])
    view_case(cases, 'split size larger than dim', arange_spec('float32', [4]), [['split', 10], ['getitem', 0]])
    view_case(cases, 'squeeze list with non-1 dims', b1, [['squeeze', [0, 1, 2]]])
    view_case(cases, 'unsqueeze on transposed middle', b234, [['transpose', 0, 2], ['unsqueeze', 2]])
    view_case(cases, 'flatten of transposed (copy)', b234, [['transpose', 0, 1], ['flatten']])
    view_case(cases, 'flatten of sliced contiguous-inner', b234, [['slice', 0, 1, 2, 1], ['flatten', 1]])
    view_case(cases, 'flatten single dim is a view', b234, [['flatten', 1, 1]])
    view_case(cases, 'permute of expanded', arange_spec('float32', [3, 1]), [['expand', [3, 4]], ['permute', [1, 0]]])
    view_case(cases, 'select negative dim and index', b234, [['select', -2, -3]])
    view_case(cases, 'narrow negative dim', b234, [['narrow', -1, 1, 2]])
    view_case(cases, 'int64 view chain', arange_spec('int64', [2, 6]), [['view', [2, 2, 3]], ['transpose', 1, 2], ['select', 0, 1]])
    view_case(cases, 'bool transpose', spec('bool', [2, 3], [True, False, True, True, False, False]), [['t']])
    view_case(cases, 'float16 select', spec('float16', [2, 3], [0.5, 1, 1.5, 2, 2.5, 3]), [['select', 1, 2]])
    return cases


# ---------------------------------------------------------------------------------------------
# promotion

def gen_promotion():
    res = {'pairs': [], 'scalars': [], 'zeroDim': [], 'ops': [], 'inplace': [], 'sum': []}
    for a in ALL:
        for b in ALL:
            ta = torch.ones(2, dtype=DT[a])
            tb = torch.ones(2, dtype=DT[b])
            res['pairs'].append({'a': a, 'b': b, 'result': DT_NAME[torch.result_type(ta, tb)]})
            z = torch.ones((), dtype=DT[a])
            res['zeroDim'].append({'zeroDim': a, 'dims': b, 'result': DT_NAME[torch.result_type(z, tb)]})
            entry = {'self': a, 'other': b}
            try:
                x = torch.ones(2, dtype=DT[a])
                x.add_(tb)
                entry['ok'] = True
            except RuntimeError as e:
                entry['ok'] = False
                entry['error'] = err(e)
            res['inplace'].append(entry)
        for s in [2, 2.5, True, -1]:
            ta = torch.ones(2, dtype=DT[a])
            res['scalars'].append({'dtype': a, 'scalar': s, 'result': DT_NAME[torch.result_type(ta, s)]})
        for op in ['div', 'eq', 'mul']:
            for b in ['int64', 'float32', 'bool']:
                ta = torch.ones(2, dtype=DT[a])
                tb = torch.ones(2, dtype=DT[b])
                try:
                    r = getattr(torch, op)(ta, tb)
                    res['ops'].append({'op': op, 'a': a, 'b': b, 'result': DT_NAME[r.dtype]})
                except RuntimeError as e:
                    res['ops'].append({'op': op, 'a': a, 'b': b, 'error': err(e)})
        for op in ['sum', 'mean']:
            try:
                r = getattr(torch, op)(torch.ones(2, dtype=DT[a]))
                res['sum'].append({'op': op, 'dtype': a, 'result': DT_NAME[r.dtype]})
            except RuntimeError as e:
                res['sum'].append({'op': op, 'dtype': a, 'error': err(e)})
    # 0-d with 0-d: both "dims" category
    res['zeroDimBoth'] = []
    for a, b in [('float64', 'float32'), ('int64', 'int32'), ('float16', 'int64'), ('bool', 'uint8')]:
        res['zeroDimBoth'].append({'a': a, 'b': b, 'result': DT_NAME[torch.result_type(torch.ones((), dtype=DT[a]),
                                                                                       torch.ones((), dtype=DT[b]))]})
    return res


# ---------------------------------------------------------------------------------------------
# creation, printing, error messages

def gen_creation():
    res = {'factories': [], 'printing': []}

    def fac(name, fn, js):
        try:
            res['factories'].append({'name': name, 'call': js, 'expected': out(fn())})
        except (RuntimeError, ValueError, TypeError) as e:
            res['factories'].append({'name': name, 'call': js, 'error': err(e)})
    fac('arange(5)', lambda: torch.arange(5), ['arange', 5])
    fac('arange(2, 7)', lambda: torch.arange(2, 7), ['arange', 2, 7])
    fac('arange(0, 1, 0.1)', lambda: torch.arange(0, 1, 0.1), ['arange', 0, 1, 0.1])
    fac('arange(1, 2.5, 0.5)', lambda: torch.arange(1, 2.5, 0.5), ['arange', 1, 2.5, 0.5])
    fac('arange(10, 0, -3)', lambda: torch.arange(10, 0, -3), ['arange', 10, 0, -3])
    fac('arange(5, dtype=float64)', lambda: torch.arange(5, dtype=torch.float64), ['arange', 5, {'dtype': 'float64'}])
    fac('arange(0, 5, 2, dtype=int32)', lambda: torch.arange(0, 5, 2, dtype=torch.int32), ['arange', 0, 5, 2, {'dtype': 'int32'}])
    fac('arange(-1.5, 1.5, 0.25)', lambda: torch.arange(-1.5, 1.5, 0.25), ['arange', -1.5, 1.5, 0.25])
    fac('arange(0) empty', lambda: torch.arange(0), ['arange', 0])
    fac('arange step 0 (error)', lambda: torch.arange(0, 5, 0), ['arange', 0, 5, 0])
    fac('arange wrong sign (error)', lambda: torch.arange(0, 5, -1), ['arange', 0, 5, -1])
    fac('linspace(0, 1, 5)', lambda: torch.linspace(0, 1, 5), ['linspace', 0, 1, 5])
    fac('linspace(-1, 1, 4)', lambda: torch.linspace(-1, 1, 4), ['linspace', -1, 1, 4])
    fac('linspace(3, 3, 1)', lambda: torch.linspace(3, 3, 1), ['linspace', 3, 3, 1])
    fac('linspace(0, 10, 0)', lambda: torch.linspace(0, 10, 0), ['linspace', 0, 10, 0])
    fac('linspace(0, 1, 7, float64)', lambda: torch.linspace(0, 1, 7, dtype=torch.float64), ['linspace', 0, 1, 7, {'dtype': 'float64'}])
    fac('linspace(0, 10, 5, int64)', lambda: torch.linspace(0, 10, 5, dtype=torch.int64), ['linspace', 0, 10, 5, {'dtype': 'int64'}])
    fac('linspace(10, 0, 3)', lambda: torch.linspace(10, 0, 3), ['linspace', 10, 0, 3])
    fac('linspace negative steps (error)', lambda: torch.linspace(0, 1, -1), ['linspace', 0, 1, -1])
    fac('eye(3)', lambda: torch.eye(3), ['eye', 3])
    fac('eye(2, 4)', lambda: torch.eye(2, 4), ['eye', 2, 4])
    fac('eye(4, 2, int32)', lambda: torch.eye(4, 2, dtype=torch.int32), ['eye', 4, 2, {'dtype': 'int32'}])
    fac('eye(0)', lambda: torch.eye(0), ['eye', 0])
    fac('eye(-1) (error)', lambda: torch.eye(-1), ['eye', -1])
    fac('full([2,2], 7)', lambda: torch.full([2, 2], 7), ['full', [2, 2], 7])
    fac('full([2], 1.5)', lambda: torch.full([2], 1.5), ['full', [2], 1.5])
    fac('full([3], true)', lambda: torch.full([3], True), ['full', [3], True])
    fac('full([2], 3, float64)', lambda: torch.full([2], 3, dtype=torch.float64), ['full', [2], 3, {'dtype': 'float64'}])
    fac('zeros(2, 3)', lambda: torch.zeros(2, 3), ['zeros', 2, 3])
    fac('zeros([2, 3], int32)', lambda: torch.zeros([2, 3], dtype=torch.int32), ['zeros', [2, 3], {'dtype': 'int32'}])
    fac('zeros([])', lambda: torch.zeros([]), ['zeros', []])
    fac('zeros([0, 4])', lambda: torch.zeros([0, 4]), ['zeros', [0, 4]])
    fac('ones(3)', lambda: torch.ones(3), ['ones', 3])
    fac('ones([2], bool)', lambda: torch.ones([2], dtype=torch.bool), ['ones', [2], {'dtype': 'bool'}])
    fac('ones([2], float16)', lambda: torch.ones([2], dtype=torch.float16), ['ones', [2], {'dtype': 'float16'}])
    fac('zeros negative (error)', lambda: torch.zeros([-1, 2]), ['zeros', [-1, 2]])
    fac('tensor([1, 2, 3])', lambda: torch.tensor([1, 2, 3]), ['tensor', [1, 2, 3]])
    fac('tensor([1.5, 2])', lambda: torch.tensor([1.5, 2]), ['tensor', [1.5, 2]])
    fac('tensor([[true, false]])', lambda: torch.tensor([[True, False]]), ['tensor', [[True, False]]])
    fac('tensor(3)', lambda: torch.tensor(3), ['tensor', 3])
    fac('tensor(2.5)', lambda: torch.tensor(2.5), ['tensor', 2.5])
    fac('tensor([])', lambda: torch.tensor([]), ['tensor', []])
    fac('tensor([[1, 2], [3, 4]], float64)', lambda: torch.tensor([[1, 2], [3, 4]], dtype=torch.float64),
        ['tensor', [[1, 2], [3, 4]], {'dtype': 'float64'}])
    fac('tensor([1.7, -1.7], int32) truncates', lambda: torch.tensor([1.7, -1.7]).to(torch.int32),
        ['tensor', [1.7, -1.7], {'dtype': 'int32'}])
    fac('tensor([0.1, 1e5], float16)', lambda: torch.tensor([0.1, 1e5]).to(torch.float16), ['tensor', [0.1, 1e5], {'dtype': 'float16'}])
    fac('tensor([0.1, 3.14159], bfloat16)', lambda: torch.tensor([0.1, 3.14159]).to(torch.bfloat16),
        ['tensor', [0.1, 3.14159], {'dtype': 'bfloat16'}])
    fac('tensor([[1, 2], [3]]) ragged (error)', lambda: torch.tensor([[1, 2], [3]]), ['tensor', [[1, 2], [3]]])

    def pr(name, t, js):
        res['printing'].append({'name': name, 'call': js, 'str': str(t)})
    pr('float vector', torch.tensor([1., 2.]), ['tensor', [1, 2], {'dtype': 'float32'}])
    pr('float fractions', torch.tensor([1.5, 2.25]), ['tensor', [1.5, 2.25]])
    pr('float 0-d', torch.tensor(3.), ['tensor', 3, {'dtype': 'float32'}])
    pr('int64 vector', torch.tensor([1, 2, 3]), ['tensor', [1, 2, 3]])
    pr('int64 matrix', torch.tensor([[1, 2], [3, 4]]), ['tensor', [[1, 2], [3, 4]]])
    pr('bool vector', torch.tensor([True, False]), ['tensor', [True, False]])
    pr('float matrix', torch.tensor([[1.5, -2.], [0., 10.]]), ['tensor', [[1.5, -2], [0, 10]]])
    pr('negative ints', torch.tensor([-1, 20, 3]), ['tensor', [-1, 20, 3]])
    pr('nan and inf', torch.tensor([float('nan'), float('inf'), 1.]), ['tensor', ['nan', 'inf', 1]])
    pr('int32 vector', torch.tensor([1, 2], dtype=torch.int32), ['tensor', [1, 2], {'dtype': 'int32'}])
    pr('float64 vector', torch.tensor([1.5, 2.], dtype=torch.float64), ['tensor', [1.5, 2], {'dtype': 'float64'}])
    pr('empty float', torch.tensor([]), ['tensor', []])
    pr('float16 vector', torch.tensor([0.5, 1.], dtype=torch.float16), ['tensor', [0.5, 1], {'dtype': 'float16'}])
    pr('bfloat16 vector', torch.tensor([0.5, 1.], dtype=torch.bfloat16), ['tensor', [0.5, 1], {'dtype': 'bfloat16'}])
    pr('int8 matrix', torch.tensor([[1, -2], [3, 4]], dtype=torch.int8), ['tensor', [[1, -2], [3, 4]], {'dtype': 'int8'}])
    pr('uint8 vector', torch.tensor([0, 255], dtype=torch.uint8), ['tensor', [0, 255], {'dtype': 'uint8'}])
    pr('scientific', torch.tensor([1e-5, 1e5]), ['tensor', [1e-5, 1e5]])
    pr('scientific large', torch.tensor([1.5e10, 2.]), ['tensor', [1.5e10, 2], {'dtype': 'float32'}])
    pr('small fractions', torch.tensor([0.001, 0.0001]), ['tensor', [0.001, 0.0001]])
    pr('bool 0-d', torch.tensor(True), ['tensor', True])
    pr('int 0-d negative', torch.tensor(-7), ['tensor', -7])
    pr('bool matrix', torch.tensor([[True, False], [False, True]]), ['tensor', [[True, False], [False, True]]])
    pr('3-d float', torch.arange(8.).reshape(2, 2, 2), ['tensor', [[[0, 1], [2, 3]], [[4, 5], [6, 7]]], {'dtype': 'float32'}])
    pr('empty 2-d', torch.zeros(0, 3), ['zeros', [0, 3]])
    pr('empty int32', torch.zeros(0, dtype=torch.int32), ['zeros', [0], {'dtype': 'int32'}])
    pr('negative zero', torch.tensor([-0., 1.]), ['tensor', ['-0', 1], {'dtype': 'float32'}])
    pr('nan only', torch.tensor([float('nan')]), ['tensor', ['nan']])
    pr('inf with fractions', torch.tensor([float('-inf'), 0.5]), ['tensor', ['-inf', 0.5]])
    pr('float64 0-d', torch.tensor(0.1, dtype=torch.float64), ['tensor', 0.1, {'dtype': 'float64'}])
    pr('large 2-d summarised', torch.arange(2000.).reshape(40, 50), ['reshape-arange', 2000, [40, 50]])
    # assorted magnitudes and signs (the formatter picks widths, fixed vs scientific, per tensor)
    for i, (lo, hi, n) in enumerate([(-1, 1, 5), (-100, 100, 6), (0, 1e-3, 4), (-1e4, 1e4, 5), (0.5, 9.5, 7),
                                     (-3, 3, 12), (1e3, 9e3, 3), (-1e-2, 1e-2, 4)]):
        vals = [float(torch.tensor(rng.uniform(lo, hi), dtype=torch.float32)) for _ in range(n)]
        vals = [round(v, 6) for v in vals]
        pr(f'float32 values in [{lo}, {hi}]', torch.tensor(vals), ['tensor', vals, {'dtype': 'float32'}])
    for i, (lo, hi, shape) in enumerate([(-5, 5, [3, 4]), (-1000, 1000, [2, 3]), (0, 9, [2, 2, 2])]):
        vals = [rng.int(lo, hi) for _ in range(numel(shape))]
        t = torch.tensor(vals).reshape(shape)
        pr(f'int64 {shape} in [{lo}, {hi}]', t, ['tensor', t.tolist()])
    t = torch.tensor([[0.25, -1.5, 3.125], [100.5, 0.0, -7.75]], dtype=torch.float64)
    pr('float64 matrix', t, ['tensor', t.tolist(), {'dtype': 'float64'}])
    t = torch.tensor([[1e-8, 1.0], [2.0, 3.0]])
    pr('tiny with ones (scientific)', t, ['tensor', t.tolist(), {'dtype': 'float32'}])
    t = torch.tensor([123456789.0, 1.0])
    pr('over 1e8 (scientific)', t, ['tensor', [123456789, 1], {'dtype': 'float32'}])
    t = torch.tensor([1e8, 2e8])
    pr('integer-valued over 1e8', t, ['tensor', [1e8, 2e8], {'dtype': 'float32'}])
    pr('wide row wraps at 80 columns', torch.arange(30.) / 7, ['arange-div', 30, 7])
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {
        'pointwise.json': gen_pointwise(),
        'reductions.json': gen_reductions(),
        'matmul.json': gen_matmul(),
        'views.json': gen_views(),
        'promotion.json': gen_promotion(),
        'creation.json': gen_creation(),
    }
    total = 0
    for name, data in files.items():
        path = os.path.join(OUT, name)
        payload = {'generator': 'tools/gen-fixtures.py', 'torch': torch.__version__, 'cases': data}
        text = json.dumps(payload, separators=(',', ':'), allow_nan=False)
        with open(path, 'w') as f:
            f.write(text + '\n')
        total += len(text)
        n = len(data) if isinstance(data, list) else sum(len(v) for v in data.values())
        print(f'{path}: {n} entries, {len(text)} bytes')
    print(f'total {total} bytes')
    if total > 2_000_000:
        sys.exit('fixtures exceed 2 MB')


if __name__ == '__main__':
    main()
