"""generate_modules.py - records PyTorch's own module test database (ModuleInfo,
torch.testing._internal.common_modules' module_db) as fixtures for kindling: for every ModuleInfo
and every sample of its module_inputs_func, for float32 and float64 (the dtypes of the ModuleInfo
kindling has) and for training and eval mode where the ModuleInfo says they differ (as PyTorch's
@modules decorator does), the constructor and forward arguments with their keyword names
camelCased, the module's state dict, the outputs, the buffers the forward changed (BatchNorm's
running statistics), and the gradients of the inputs and parameters for a fixed random
grad_output. Every module of module_db is recorded, whether kindling has it or not:
test/moduleinfo.test.js reports a module kindling lacks as missing and runs its samples as soon as
it exists. tools/opinfo/module_report.js prints the pass rates.

Run:  /usr/bin/python3 tools/opinfo/generate_modules.py              (everything)
      /usr/bin/python3 tools/opinfo/generate_modules.py Linear LSTM  (only these modules)

Writes test/fixtures/moduleinfo/<Module>.json.gz (gzip of JSON). The encoding is
tools/opinfo/generate.py's (tensors, dtypes, NaN/Inf, tuples), and a Python function argument
(TransformerEncoderLayer's activation=F.gelu) is {"$fn": "nn.functional.gelu"}: kindling's
function of that path; a module argument (Build below) is {"$module": class name, "args",
"kwargs"}: kd.nn's class built with them.

Nondeterministic samples: PyTorch's harness freezes the RNG state around each call so that a
module drawing random numbers (dropout) gives the same values twice. kindling's generator is not
PyTorch's, so a sample whose output changes with the seed (found by running it under two seeds)
is recorded with "random": only the shapes and dtypes of its outputs are compared, and no
gradients are recorded.
"""
import contextlib
import gzip
import json
import os
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'moduleinfo')
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from generate import enc, enc_out, flat_tensors, zero_tensors, count, DT_NAME, TooBig  # noqa: E402  (also stands in for torch.empty)
from mapping import Unsupported  # noqa: E402
from torch.testing._internal.common_modules import module_db  # noqa: E402

MAX_SAMPLE_NUMEL = 40000  # elements of one sample's inputs, state, outputs and gradients


def camel(name):
    """PyTorch's keyword -> kindling's: dim_feedforward -> dimFeedforward, batch_first -> batchFirst."""
    return re.sub(r'_([a-z0-9])', lambda m: m.group(1).upper(), name)


def function_path(fn):
    """A function argument -> {"$fn": its kindling path}; only nn.functional and torch functions."""
    for path, mod in (('nn.functional', F), ('', torch)):
        name = getattr(fn, '__name__', None)
        if name and getattr(mod, name, None) is fn:
            return {'$fn': (path + '.' if path else '') + camel(name)}
    raise Unsupported('function argument %r' % fn)


class Build:
    """A module argument of a constructor (TransformerEncoder's encoder_layer): built as
    cls(*args, **kwargs) when the sample runs, recorded as {"$module": "TransformerEncoderLayer",
    "args": [...], "kwargs": {...}} (kwargs camelCased), which kindling builds as kd.nn's class."""

    def __init__(self, cls, *args, **kwargs):
        self.cls, self.args, self.kwargs = cls, args, kwargs

    def make(self):
        return self.cls(*[materialize(a) for a in self.args], **{k: materialize(v) for k, v in self.kwargs.items()})


def materialize(v):
    return v.make() if isinstance(v, Build) else v


def prep(v):
    """Replaces function and module arguments by their {"$fn"} and {"$module"} forms (before enc)."""
    if isinstance(v, torch.Tensor) or isinstance(v, (str, bool, int, float, type(None), torch.dtype)):
        return v
    if isinstance(v, Build):
        rec = {'$module': v.cls.__name__, 'args': prep(list(v.args))}
        if v.kwargs:
            rec['kwargs'] = prep({camel(k): x for k, x in v.kwargs.items()})
        return rec
    if isinstance(v, (list, tuple)):
        return [prep(x) for x in v]
    if isinstance(v, dict):
        return {k: prep(x) for k, x in v.items()}
    if callable(v):
        return function_path(v)
    return v


def enc_call(fi, budget):
    rec = {'args': enc(prep(list(fi.args)), budget)}
    if fi.kwargs:
        rec['kwargs'] = enc(prep({camel(k): v for k, v in fi.kwargs.items()}), budget)
    return rec


def seed_of(*parts):
    return zlib.crc32('/'.join(map(str, parts)).encode()) & 0x7fffffff


def build(info, sample, dtype, training, seed):
    torch.manual_seed(seed)
    c = sample.constructor_input
    m = info.module_cls(*[materialize(a) for a in c.args], **{k: materialize(v) for k, v in c.kwargs.items()})
    if getattr(info, 'perturb', False):  # parameters away from their initial values (LayerNorm's ones and zeros)
        with torch.no_grad():
            for p in m.parameters():
                p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.2)
    m.to(dtype)
    m.train(training)
    return m


def call(m, sample):
    f = sample.forward_input
    return m(*f.args, **f.kwargs)


def is_random(info, sample, dtype, training, key):
    """Whether the sample's output depends on the RNG (dropout in training mode)."""
    outs = []
    for s in (1, 2):
        m = build(info, sample, dtype, training, key)
        with torch.no_grad():
            if isinstance(m, torch.nn.modules.lazy.LazyModuleMixin):
                call(m, sample)  # materialises the parameters (from the seed build() set)
            torch.manual_seed(key + s)
            outs.append([t.clone() for t in flat_tensors(call(m, sample))])
    return any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(*outs))


def record_sample(info, sample, dtype, training, key, stats):
    budget = [0, MAX_SAMPLE_NUMEL]
    try:
        rec = {'desc': sample.desc, 'constructor': enc_call(sample.constructor_input, budget),
               'forward': enc_call(sample.forward_input, budget)}
    except Unsupported as e:
        return skip(stats, str(e))
    except TooBig:
        return skip(stats, 'too large')
    try:
        random = is_random(info, sample, dtype, training, key)
        m = build(info, sample, dtype, training, key)
        lazy = isinstance(m, torch.nn.modules.lazy.LazyModuleMixin)
        before = None if lazy else {k: v.detach().clone() for k, v in m.state_dict().items()}
        torch.manual_seed(key + 1)
        with torch.no_grad() if no_grad(info) else contextlib.nullcontext():
            result = call(m, sample)
    except Exception as e:  # PyTorch rejects it: kindling must too
        rec['error'] = {'type': type(e).__name__, 'message': str(e).split('\n')[0][:300]}
        return rec
    after = m.state_dict()
    if lazy:  # the parameters exist once the first forward has run: load those
        before = {k: v.detach().clone() for k, v in after.items()}
    try:
        rec['state'] = {k: enc_out(v, budget) for k, v in before.items()}
        changed = {k: v for k, v in after.items() if not (v.shape == before[k].shape and torch.equal(v, before[k]))}
        if changed and not random:
            rec['stateAfter'] = {k: enc_out(v, budget) for k, v in changed.items()}
        rec['out'] = enc_out(zero_tensors(result) if random else result, budget)
        if random:
            rec['random'] = True
        elif no_grad(info):
            rec['noGrad'] = True
        else:
            grads = record_grads(m, sample, result, key, budget)
            if grads:
                rec.update(grads)
    except Unsupported as e:
        return skip(stats, str(e))
    except TooBig:
        return skip(stats, 'too large')
    return rec


def record_grads(m, sample, result, key, budget):
    """gradOutputs (per output tensor; null where it carries no gradient), grads (per forward input
    tensor requiring grad, in the order of the call's arguments) and paramGrads ({name: grad or
    null} over named_parameters)."""
    f = sample.forward_input
    inputs = []
    seen = set()
    for t in flat_tensors([list(f.args), list(f.kwargs.values())]):
        if t.requires_grad and id(t) not in seen:  # a non-leaf (NLLLoss's log_softmax input) too: kindling gets its values as a leaf
            seen.add(id(t))
            inputs.append(t)
    params = list(m.named_parameters())
    outs = flat_tensors(result)
    diff = [o for o in outs if o.requires_grad and o.is_floating_point()]
    if not diff or not (inputs or params):
        return None
    gen = torch.Generator().manual_seed(key + 2)
    gos = {id(o): torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype) for o in diff}
    grads = torch.autograd.grad(diff, inputs + [p for _, p in params], [gos[id(o)] for o in diff], allow_unused=True)
    return {'gradOutputs': [enc_out(gos[id(o)], budget) if id(o) in gos else None for o in outs],
            'grads': [None if g is None else enc_out(g, budget) for g in grads[:len(inputs)]],
            'paramGrads': {n: None if g is None else enc_out(g, budget) for (n, _), g in zip(params, grads[len(inputs):])}}


def skip(stats, reason):
    stats['skipped'][reason] = stats['skipped'].get(reason, 0) + 1
    return None


def training_flags(info):
    """PyTorch's: training mode, and eval mode too where they differ; or info.training_flags."""
    return getattr(info, 'training_flags', None) or ([True, False] if info.train_and_eval_differ else [True])


def no_grad(info):
    """Whether info's samples run under torch.no_grad() (a sample then has "noGrad" and no gradients)."""
    return getattr(info, 'no_grad', False)


def generate_module(info):
    name = info.module_cls.__name__
    stats = {'forward': 0, 'grad': 0, 'errors': 0, 'skipped': {}}
    samples = []
    for training in training_flags(info):
        for dtype in (torch.float32, torch.float64):
            if dtype not in info.dtypes:
                continue
            prefix = ('train/' if training else 'eval/') if info.train_and_eval_differ else ''
            torch.manual_seed(seed_of(name, prefix, DT_NAME[dtype]))
            drawn = list(info.module_inputs_func(info, device='cpu', dtype=dtype, requires_grad=not no_grad(info), training=training))
            for i, sample in enumerate(drawn):
                key = seed_of(name, prefix, DT_NAME[dtype], i)
                rec = record_sample(info, sample, dtype, training, key, stats)
                if rec is None:
                    continue
                rec['id'] = '%s%s/%d' % (prefix, DT_NAME[dtype], i)
                rec['dtype'] = DT_NAME[dtype]
                rec['training'] = training
                samples.append(rec)
    count(samples, stats)
    return samples, stats


def write_module(info, path):
    """Records the samples of info (a ModuleInfo, or an object with its module_cls, dtypes,
    train_and_eval_differ and module_inputs_func) into path (gzip of JSON); the stats."""
    samples, stats = generate_module(info)
    doc = {'module': info.module_cls.__name__, 'torch': torch.__version__.split('a')[0], 'samples': samples}
    if stats['skipped']:
        doc['skipped'] = stats['skipped']
    data = json.dumps(doc, separators=(',', ':')).encode()
    with open(path, 'wb') as f:
        f.write(gzip.compress(data, 9, mtime=0))
    return stats


def main(only):
    os.makedirs(OUT, exist_ok=True)
    total = [0, 0, 0]
    for info in module_db:
        name = info.module_cls.__name__
        if only and name not in only:
            continue
        stats = write_module(info, os.path.join(OUT, name + '.json.gz'))
        total = [total[0] + stats['forward'], total[1] + stats['grad'], total[2] + stats['errors']]
        print('%-28s %d forward, %d grad, %d errors%s' % (name, stats['forward'], stats['grad'], stats['errors'],
              ('; skipped %s' % stats['skipped']) if stats['skipped'] else ''), file=sys.stderr)
    size = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print('ModuleInfo: %d module_db entries; %d forward samples, %d gradient samples, %d error samples; fixtures %.1f MB'
          % (len(module_db), total[0], total[1], total[2], size / 1e6))


if __name__ == '__main__':
    main(set(sys.argv[1:]))
