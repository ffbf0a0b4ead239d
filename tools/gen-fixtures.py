#!/usr/bin/env python3
"""gen-fixtures.py - writes test/fixtures/<family>.json: inputs and the outputs PyTorch computes for
them, one file per generator module in tools/fixtures/ (common.py is the shared machinery and
documents the JSON conventions).

Run:  /usr/bin/python3 tools/gen-fixtures.py              every family (needs torch; CPU is enough)
      /usr/bin/python3 tools/gen-fixtures.py unary sort   only these families

The JSON is committed, so the JS tests (test/*.test.js) never need PyTorch. Each family's data comes
from its own LCG stream (seeded from the family's name), so regenerating one family never changes
another. A new family is a new module tools/fixtures/<family>.py with a `generate()` that returns its
list of cases (see docs/ADDING_OPS.md).
"""
import importlib
import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'fixtures'))

import common  # noqa: E402
import torch  # noqa: E402

MAX_FILE_BYTES = 1_500_000


def families():
    names = [f[:-3] for f in os.listdir(os.path.join(HERE, 'fixtures')) if f.endswith('.py') and f != 'common.py']
    return sorted(names)


def main():
    os.makedirs(common.OUT, exist_ok=True)
    wanted = sys.argv[1:] or families()
    unknown = [w for w in wanted if w not in families()]
    if unknown:
        sys.exit(f'no generator tools/fixtures/<name>.py for: {", ".join(unknown)} (have: {", ".join(families())})')
    total = 0
    for fam in wanted:
        common.rng.s = zlib.crc32(fam.encode()) & 0xffffffff
        data = importlib.import_module(fam).generate()
        path = os.path.join(common.OUT, fam + '.json')
        payload = {'generator': f'tools/fixtures/{fam}.py', 'torch': torch.__version__, 'cases': data}
        text = json.dumps(payload, separators=(',', ':'), allow_nan=False)
        if len(text) > MAX_FILE_BYTES:
            sys.exit(f'{path}: {len(text)} bytes exceeds {MAX_FILE_BYTES}; use smaller tensors')
        with open(path, 'w') as f:
            f.write(text + '\n')
        total += len(text)
        n = len(data) if isinstance(data, list) else sum(len(v) for v in data.values())
        print(f'{path}: {n} entries, {len(text)} bytes')
    print(f'total {total} bytes')


if __name__ == '__main__':
    main()
