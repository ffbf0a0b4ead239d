#!/usr/bin/env python3
"""safetensors_check.py - the Python side of kindling's safetensors fixtures (test/serialization.test.js).

PyTorch 1.13 is installed here but the `safetensors` package is not, so this script writes and reads
the format by hand (struct + json), following the safetensors specification and the checks of its
reference reader (safetensors/src/tensor.rs: `SafeTensors::read_metadata` and `Metadata::validate`).

  /usr/bin/python3 tools/safetensors_check.py write
      writes test/fixtures/safetensors/expected.json (the tensors, from torch) and
      test/fixtures/safetensors/from_python.safetensors (those tensors, laid out as Python's
      safetensors.torch.save_file does: __metadata__ first, tensors sorted by dtype alignment then
      name, back to back, header padded with spaces to a multiple of 8)
  (then: KD_UPDATE_FIXTURES=1 npx mocha test/serialization.test.js writes from_kindling.safetensors)
  /usr/bin/python3 tools/safetensors_check.py check
      parses test/fixtures/safetensors/from_kindling.safetensors with the strict reader below and
      compares every tensor (bit for bit) with expected.json read back through torch; the result is
      recorded in test/fixtures/safetensors/from_kindling.check.json (committed; the test asserts it).
"""
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, '..', 'test', 'fixtures', 'safetensors')

DTYPES = {  # safetensors code -> (torch dtype, item size)
    'F64': (torch.float64, 8), 'F32': (torch.float32, 4), 'F16': (torch.float16, 2),
    'BF16': (torch.bfloat16, 2), 'I64': (torch.int64, 8), 'I32': (torch.int32, 4),
    'I16': (torch.int16, 2), 'I8': (torch.int8, 1), 'U8': (torch.uint8, 1), 'BOOL': (torch.bool, 1),
}
CODE = {v[0]: k for k, v in DTYPES.items()}
METADATA = {'format': 'pt', 'source': 'pytorch 1.13 (tools/safetensors_check.py)'}


def fixture_tensors():
    """The tensors both fixtures hold: every dtype, 0-d, empty, a non-contiguous source."""
    t = {}
    t['f32'] = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 2.0
    t['f64'] = torch.tensor([[0.1, -1e300, 3.5], [float('inf'), -0.0, 1e-310]], dtype=torch.float64)
    t['f16'] = (torch.arange(8, dtype=torch.float32) - 4).mul(0.375).to(torch.float16)
    t['bf16'] = (torch.arange(8, dtype=torch.float32) - 4).mul(1.5).reshape(2, 4).to(torch.bfloat16)
    t['i64'] = torch.tensor([-(2 ** 62) - 7, -1, 0, 2 ** 53 + 1, 2 ** 62 + 9], dtype=torch.int64)
    t['i32'] = torch.tensor([[-2 ** 31, -5], [7, 2 ** 31 - 1]], dtype=torch.int32)
    t['i16'] = torch.tensor([-32768, -3, 4, 32767], dtype=torch.int16)
    t['i8'] = torch.tensor([[-128, -1, 0], [1, 64, 127]], dtype=torch.int8)
    t['u8'] = torch.tensor([0, 1, 128, 255], dtype=torch.uint8)
    t['bool'] = torch.tensor([[True, False, True], [False, False, True]])
    t['scalar'] = torch.tensor(3.25, dtype=torch.float32)
    t['empty'] = torch.zeros(0, 3, dtype=torch.float32)
    t['model.fc.weight'] = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # non-contiguous
    t['model.fc.bias'] = torch.tensor([0.5, -0.5], dtype=torch.float32)
    return t


def to_json_values(x):
    if x.dtype == torch.int64:
        return [str(v) for v in x.reshape(-1).tolist()]
    if x.dtype == torch.bool:
        return [bool(v) for v in x.reshape(-1).tolist()]
    vals = x.to(torch.float64).reshape(-1).tolist()
    return [v if v == v and abs(v) != float('inf') else str(v) for v in vals]


def write_file(path, tensors, metadata):
    """As safetensors.torch.save_file: sorted by (alignment desc, name), contiguous, padded."""
    order = sorted(tensors.items(), key=lambda kv: (-DTYPES[CODE[kv[1].dtype]][1], kv[0]))
    header = {'__metadata__': metadata} if metadata else {}
    blobs, off = [], 0
    for name, x in order:
        b = x.contiguous().numpy().tobytes() if x.dtype != torch.bfloat16 else \
            x.contiguous().view(torch.int16).numpy().tobytes()
        header[name] = {'dtype': CODE[x.dtype], 'shape': list(x.shape), 'data_offsets': [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    hb = json.dumps(header, separators=(',', ':')).encode('utf-8')
    hb += b' ' * ((8 - len(hb) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(hb)))
        f.write(hb)
        for b in blobs:
            f.write(b)


class InvalidFile(Exception):
    pass


def read_file(path):
    """The strict reader: every check of safetensors' Rust reader. Returns (metadata, tensors, notes)."""
    with open(path, 'rb') as f:
        buf = f.read()
    if len(buf) < 8:
        raise InvalidFile('HeaderTooSmall')
    (n,) = struct.unpack('<Q', buf[:8])
    if n > 100_000_000:
        raise InvalidFile('HeaderTooLarge')
    stop = 8 + n
    if stop > len(buf):
        raise InvalidFile('InvalidHeaderLength')
    text = buf[8:stop].decode('utf-8')  # InvalidHeader on failure
    if not text.startswith('{'):
        raise InvalidFile('InvalidHeaderStart')
    header = json.loads(text)
    metadata = header.pop('__metadata__', None)
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise InvalidFile('metadata must map strings to strings')
    data = buf[stop:]
    entries = sorted(header.items(), key=lambda kv: tuple(kv[1]['data_offsets']))
    start = 0
    for name, info in entries:
        s, e = info['data_offsets']
        if s != start or e < s:
            raise InvalidFile(f'InvalidOffset({name})')
        start = e
        if info['dtype'] not in DTYPES:
            raise InvalidFile(f'unknown dtype {info["dtype"]}')
        numel = 1
        for d in info['shape']:
            numel *= d
        if numel * DTYPES[info['dtype']][1] != e - s:
            raise InvalidFile(f'TensorInvalidInfo({name})')
    if start != len(data):
        raise InvalidFile('MetadataIncompleteBuffer')
    tensors = {}
    for name, info in header.items():
        s, e = info['data_offsets']
        dt = DTYPES[info['dtype']][0]
        raw = bytearray(data[s:e])
        if dt == torch.bfloat16:
            x = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if raw else torch.empty(0, dtype=dt)
        else:
            x = torch.frombuffer(raw, dtype=dt) if raw else torch.empty(0, dtype=dt)
        tensors[name] = x.reshape(info['shape'])
    notes = {'header_padded_to_8': (8 + n) % 8 == 0, 'header_order': list(header.keys())}
    return metadata, tensors, notes


def same_bits(a, b):
    if a.dtype != b.dtype or list(a.shape) != list(b.shape):
        return False
    if a.dtype == torch.bfloat16 or a.dtype == torch.float16:
        return torch.equal(a.view(torch.int16), b.view(torch.int16))
    if a.dtype.is_floating_point:
        ia = a.contiguous().view(torch.int64 if a.dtype == torch.float64 else torch.int32)
        ib = b.contiguous().view(torch.int64 if b.dtype == torch.float64 else torch.int32)
        return torch.equal(ia, ib)
    return torch.equal(a, b)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else 'check'
    os.makedirs(DIR, exist_ok=True)
    tensors = fixture_tensors()
    if cmd == 'write':
        expected = {k: {'dtype': CODE[v.dtype], 'shape': list(v.shape), 'contiguous': v.is_contiguous(),
                        'values': to_json_values(v)} for k, v in tensors.items()}
        with open(os.path.join(DIR, 'expected.json'), 'w') as f:
            json.dump({'metadata': METADATA, 'tensors': expected}, f, indent=1)
        write_file(os.path.join(DIR, 'from_python.safetensors'), tensors, METADATA)
        # The reader accepts what the writer wrote.
        meta, back, _ = read_file(os.path.join(DIR, 'from_python.safetensors'))
        assert meta == METADATA and all(same_bits(back[k], v.contiguous()) for k, v in tensors.items())
        print('wrote expected.json and from_python.safetensors')
        return
    path = os.path.join(DIR, 'from_kindling.safetensors')
    result = {'file': 'test/fixtures/safetensors/from_kindling.safetensors', 'torch': torch.__version__}
    try:
        meta, back, notes = read_file(path)
        result['parsed'] = True
        result['metadata'] = meta
        result.update(notes)
        result['tensors'] = {}
        for k, v in tensors.items():
            result['tensors'][k] = bool(k in back and same_bits(back[k], v.contiguous()))
        result['extra_keys'] = sorted(set(back) - set(tensors))
        result['ok'] = all(result['tensors'].values()) and not result['extra_keys']
    except Exception as e:  # recorded, not raised: the JSON says what failed
        result['parsed'] = False
        result['error'] = f'{type(e).__name__}: {e}'
        result['ok'] = False
    with open(os.path.join(DIR, 'from_kindling.check.json'), 'w') as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))
    sys.exit(0 if result['ok'] else 1)


if __name__ == '__main__':
    main()
