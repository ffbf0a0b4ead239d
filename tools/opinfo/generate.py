"""generate.py - records PyTorch's own test database (OpInfo, torch.testing._internal's op_db) as
fixtures for kindling: for every OpInfo whose op kindling has, its seeded sample inputs for
float32, float64 and the integer and bool dtypes the OpInfo lists for the CPU, with PyTorch's
outputs (or error), and for float samples of differentiable ops the gradients for a fixed random
grad_output. test/opinfo.test.js replays them; tools/opinfo/report.js prints the pass rates.

Run:  /usr/bin/python3 tools/opinfo/generate.py           (everything, prints coverage)
      /usr/bin/python3 tools/opinfo/generate.py add sum   (only these OpInfos, by name)

Writes test/fixtures/opinfo/<OpInfo>.json.gz (one per covered OpInfo; gzip of JSON, read with
node's zlib) and tools/opinfo/coverage.json (which OpInfos are covered and why the others are
not; tools/gen-ops.js renders it into docs/OPS.md). How PyTorch's call becomes kindling's lives
in tools/opinfo/mapping.py, the one table of that.

Encoding (read by test/opinfo_helpers.js):
  tensor    {"$t": dtype, "shape": [...], "b64": little-endian raw values, base64}
            + "strides": [...] when the sample's tensor is not contiguous: then b64 holds the
              storage span it reaches and the tensor is as_strided(shape, strides) of it
            + "rg": 1 when the sample's tensor requires grad
  dtype     {"$dtype": "float32"}
  float     NaN/Inf as {"$f": "nan" | "inf" | "-inf"}
  tuples    lists; None -> null
"""
import base64
import gzip
import json
import math
import os
import subprocess
import sys
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'opinfo')
COVERAGE = os.path.join(HERE, 'coverage.json')
sys.path.insert(0, HERE)  # the expecttest stand-in, and mapping.py

warnings.filterwarnings('ignore')
import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

# Sample and error inputs that take torch.empty (out= buffers) would record uninitialised bytes,
# different on every run: they get zeros (OpInfo's ops were bound at import, so torch.empty the
# op is still itself).
_empty = torch.empty
torch.empty = lambda *args, **kwargs: torch.zeros(*args, **kwargs)
torch.empty_like = lambda *args, **kwargs: torch.zeros_like(*args, **kwargs)

import mapping  # noqa: E402
from mapping import Unsupported  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
DT_NAME = {torch.float32: 'float32', torch.float64: 'float64', torch.float16: 'float16',
           torch.bfloat16: 'bfloat16', torch.int64: 'int64', torch.int32: 'int32', torch.int16: 'int16',
           torch.int8: 'int8', torch.uint8: 'uint8', torch.bool: 'bool'}
FLOATS = (torch.float32, torch.float64)

# Size limits that keep the committed fixtures small (samples past them are counted as skipped).
MAX_SAMPLE_NUMEL = 3000      # elements of all the inputs and outputs of one sample (mapping's maxNumel: more)
MAX_SAMPLES_PER_DTYPE = 40   # samples of one OpInfo for one dtype (the first ones are kept)


def kindling_api():
    out = subprocess.run(['node', os.path.join(HERE, 'kindling_api.js')], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    api = json.loads(out)
    return {ns: set(v) for ns, v in api['functions'].items()}, set(api['methods'])


# ---------------------------------------------------------------------------------------------
# encoding

class TooBig(Exception):
    pass


def enc_tensor(t, numel_budget):
    if t.is_complex() or t.dtype not in DT_NAME or t.layout != torch.strided or t.is_quantized:
        raise Unsupported('%s tensor' % (t.dtype if t.layout == torch.strided else t.layout))
    d = t.detach()
    numel_budget[0] += d.numel()
    if numel_budget[0] > numel_budget[1]:
        raise TooBig()
    spec = {'$t': DT_NAME[d.dtype], 'shape': list(d.shape)}
    if d.is_contiguous() or d.numel() <= 1:
        flat = d.contiguous().reshape(-1)
    else:
        strides = list(d.stride())
        span = 1 + sum((s - 1) * st for s, st in zip(d.shape, strides))
        flat = torch.as_strided(d, [span], [1], d.storage_offset()).clone()
        spec['strides'] = strides
    spec['b64'] = b64(flat)
    if t.requires_grad:
        spec['rg'] = 1
    return spec


def b64(flat):
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    elif flat.dtype in (torch.float16, torch.bfloat16):
        flat = flat.view(torch.int16)  # the raw bits
    return base64.b64encode(flat.contiguous().numpy().tobytes()).decode('ascii')


def enc(v, budget):
    """A sample's value (after mapping) -> JSON."""
    if isinstance(v, torch.Tensor):
        return enc_tensor(v, budget)
    if isinstance(v, torch.dtype):
        if v not in DT_NAME:
            raise Unsupported('dtype %s' % v)
        return {'$dtype': DT_NAME[v]}
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return {'$f': 'nan'}
        if math.isinf(v):
            return {'$f': 'inf' if v > 0 else '-inf'}
        return v
    if isinstance(v, torch.device):
        return str(v)
    if isinstance(v, (list, tuple, torch.Size)):
        return [enc(x, budget) for x in v]
    if isinstance(v, dict):
        return {k: enc(x, budget) for k, x in v.items()}
    raise Unsupported(type(v).__name__ + ' argument')


def enc_out(v, budget):
    if isinstance(v, torch.Tensor):
        d = v.detach()
        if d._is_zerotensor():  # PyTorch's lazy zeros (sgn's gradient): its storage is garbage
            d = torch.zeros(d.shape, dtype=d.dtype)
        if d.is_complex() or d.dtype not in DT_NAME or d.layout != torch.strided:
            raise Unsupported('%s output' % d.dtype)
        budget[0] += d.numel()
        if budget[0] > budget[1]:
            raise TooBig()
        return {'$t': DT_NAME[d.dtype], 'shape': list(d.shape), 'b64': b64(d.contiguous().reshape(-1))}
    if isinstance(v, (list, tuple)):
        return [enc_out(x, budget) for x in v]
    if isinstance(v, complex):
        raise Unsupported('complex output')
    return enc(v, budget)


def flat_tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in flat_tensors(x)]
    return []


def zero_tensors(v):
    if isinstance(v, torch.Tensor):
        return torch.zeros(v.shape, dtype=v.dtype)
    if isinstance(v, (list, tuple)):
        return [zero_tensors(x) for x in v]
    return v


def is_identity(fn):
    marker = object()
    try:
        return fn(marker) is marker
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------
# one OpInfo

def seed_of(key, dtype):
    return zlib.crc32(('%s/%s' % (key, DT_NAME[dtype])).encode()) & 0x7fffffff


def run_torch(op, sample):
    return op(sample.input, *sample.args, **sample.kwargs)


def skip(stats, reason):
    """Counts a sample left out, by reason; None."""
    stats['skipped'][reason] = stats['skipped'].get(reason, 0) + 1
    return None


def record_sample(op, key, target, sample, dtype, want_grad, stats):
    """The JSON record of one sample, or None (skipped; the reason is counted in stats)."""
    budget = [0, mapping.MAP.get(key, {}).get('maxNumel', MAX_SAMPLE_NUMEL)]  # [elements so far, limit]
    try:
        call = mapping.kindling_call(key, target, sample)
        rec = {'args': enc(call.args, budget)}
        compare = mapping.MAP.get(key, {}).get('compareSample', lambda s: None)(sample)
        if compare:
            rec['compare'] = compare
        if call.kwargs:
            rec['kwargs'] = enc(call.kwargs, budget)
    except Unsupported as e:
        return skip(stats, str(e))
    except TooBig:
        return skip(stats, 'too large')
    try:
        with torch.no_grad():
            result = run_torch(op, sample)
    except Exception as e:  # PyTorch rejects it: kindling must too
        if "descriptor '" in str(e) or isinstance(e, AttributeError):  # Python artefacts of the reflected operators
            return skip(stats, 'a Python-only error')
        rec['error'] = {'type': type(e).__name__, 'message': str(e).split('\n')[0][:300]}
        return rec
    if target.get('random'):  # only shapes and dtypes are compared: keep the bytes deterministic
        result = zero_tensors(result)
    try:
        rec['out'] = enc_out(result, budget)
    except Unsupported as e:
        return skip(stats, str(e))
    except TooBig:
        return skip(stats, 'too large')
    if want_grad and is_identity(sample.output_process_fn_grad):
        try:
            grads = record_grads(op, sample, call, key, dtype, budget)
        except TooBig:
            grads = None
        if grads:
            rec.update(grads)
    return rec


def record_grads(op, sample, call, key, dtype, budget):
    """gradOutputs (per output tensor; null where it carries no gradient) and grads (per input
    tensor that requires grad, in the order they appear in kindling's call; null when unused)."""
    seen = set()
    inputs = []
    for t in flat_tensors([call.args, list(call.kwargs.values())]):
        if t.requires_grad and t.is_leaf and id(t) not in seen:
            seen.add(id(t))
            inputs.append(t)
    if not inputs:
        return None
    try:
        result = run_torch(op, sample)
    except Exception:
        return None
    outs = flat_tensors(result)
    diff = [o for o in outs if o.requires_grad and o.is_floating_point()]
    if not diff:
        return None
    gen = torch.Generator().manual_seed(seed_of(key, dtype) + 1)
    gos = {id(o): torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype) for o in diff}
    try:
        grads = torch.autograd.grad(diff, inputs, [gos[id(o)] for o in diff], allow_unused=True)
    except Exception:
        return None
    return {'gradOutputs': [enc_out(gos[id(o)], budget) if id(o) in gos else None for o in outs],
            'grads': [None if g is None else enc_out(g, budget) for g in grads]}


def generate_op(op, key, target):
    stats = {'forward': 0, 'grad': 0, 'errors': 0, 'skipped': {}}
    samples = []
    try:
        cpu_dtypes = op.supported_dtypes('cpu')
    except Exception:
        cpu_dtypes = op.dtypes
    for dtype in DTYPES:
        if dtype not in cpu_dtypes:
            continue
        want_grad = dtype in FLOATS and op.supports_autograd and not target.get('random')
        torch.manual_seed(seed_of(key, dtype))
        try:
            drawn = list(op.sample_inputs('cpu', dtype, requires_grad=want_grad))
        except Exception as e:
            stats['skipped']['sample_inputs raised: %s' % str(e)[:60]] = 1
            continue
        kept = 0
        for sample in drawn:
            if kept >= MAX_SAMPLES_PER_DTYPE:
                skip(stats, 'past %d samples' % MAX_SAMPLES_PER_DTYPE)
                continue
            rec = record_sample(op, key, target, sample, dtype, want_grad, stats)
            if rec is None:
                continue
            rec['id'] = '%s/%d' % (DT_NAME[dtype], kept)
            rec['dtype'] = DT_NAME[dtype]
            kept += 1
            samples.append(rec)
    # PyTorch's error inputs: calls it rejects (kindling must reject them too)
    if op.error_inputs_func is not None:
        torch.manual_seed(zlib.crc32(('%s/errors' % key).encode()) & 0x7fffffff)
        try:
            errs = list(op.error_inputs('cpu'))
        except Exception:
            errs = []
        n = 0
        for ei in errs:
            rec = record_sample(op, key, target, ei.sample_input, torch.float32, False, stats)
            if rec is None or 'error' not in rec:
                continue
            rec['id'] = 'error/%d' % n
            rec['dtype'] = None
            n += 1
            samples.append(rec)
    count(samples, stats)
    return samples, stats


def count(samples, stats):
    """Adds up the error, forward and gradient samples of the records samples into stats."""
    for r in samples:
        if 'error' in r:
            stats['errors'] += 1
        else:
            stats['forward'] += 1
            if 'grads' in r:
                stats['grad'] += 1


def write_fixture(key, target, samples):
    doc = {'opinfo': key, 'fn': target['fn'], 'form': target['form'], 'samples': samples}
    for k in ('compare', 'compareInts', 'note', 'random', 'cloneSelf', 'output'):
        if target.get(k) or (k == 'output' and k in target):  # output may be 0
            doc[k] = target[k]
    data = json.dumps(doc, separators=(',', ':')).encode()  # kwargs keep their order (gradients follow it)
    with open(os.path.join(OUT, key + '.json.gz'), 'wb') as f:
        f.write(gzip.compress(data, 9, mtime=0))


def main(only):
    functions, methods = kindling_api()
    os.makedirs(OUT, exist_ok=True)
    old = {}
    if only and os.path.exists(COVERAGE):
        with open(COVERAGE) as f:
            old = {e['opinfo']: e for e in json.load(f)['entries']}
    entries = []
    for op in op_db:
        key = op.name + ('.' + op.variant_test_name if op.variant_test_name else '')
        if only and op.name not in only and key not in only:
            if key in old:
                entries.append(old[key])
            continue
        target = mapping.resolve(key, op, functions, methods)
        entry = {'opinfo': key, 'group': mapping.group_of(key)}
        if 'missing' in target:
            entry['missing'] = target['missing']
            path = os.path.join(OUT, key + '.json.gz')
            if os.path.exists(path):
                os.remove(path)
        else:
            samples, stats = generate_op(op, key, target)
            entry.update({'kindling': target['fn'], 'forward': stats['forward'], 'grad': stats['grad'],
                          'errors': stats['errors']})
            if stats['skipped']:
                entry['skipped'] = stats['skipped']
            if target.get('note'):
                entry['note'] = target['note']
            write_fixture(key, target, samples)
        entries.append(entry)
        print('%-45s %s' % (key, entry.get('missing') or '%d forward, %d grad, %d errors' % (
            entry['forward'], entry['grad'], entry['errors'])), file=sys.stderr)
    with open(COVERAGE, 'w') as f:
        json.dump({'total': len(op_db), 'torch': torch.__version__.split('a')[0], 'entries': entries},
                  f, indent=1, sort_keys=True)
        f.write('\n')
    covered = [e for e in entries if 'missing' not in e]
    size = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print('OpInfo coverage: %d / %d op_db entries; %d forward samples, %d gradient samples, %d error samples; '
          'fixtures %.1f MB' % (len(covered), len(op_db), sum(e['forward'] for e in covered),
                                sum(e['grad'] for e in covered), sum(e['errors'] for e in covered), size / 1e6))


if __name__ == '__main__':
    main(set(sys.argv[1:]))
