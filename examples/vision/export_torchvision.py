#!/usr/bin/env python3
"""export_torchvision.py - writes a torchvision classification model's state dict as safetensors
(and its class names, one a line) for examples/vision/classify.js and examples/vision/models.

  python3 examples/vision/export_torchvision.py resnet18 DIR            # pretrained (downloads)
  python3 examples/vision/export_torchvision.py resnet18 DIR --random   # random weights, offline

writes DIR/NAME.safetensors (every entry of model.state_dict(), names unchanged, num_batches_tracked
included) and, for pretrained weights, DIR/NAME.labels.txt (weights.meta["categories"]). Needs
torch and torchvision only: the safetensors layout (8-byte header length, JSON header, raw
little-endian data) is written by hand.
"""
import json
import os
import struct
import sys

import torch
import torchvision

CODES = {torch.float32: 'F32', torch.float64: 'F64', torch.float16: 'F16', torch.int64: 'I64', torch.int32: 'I32'}


def save_safetensors(tensors, path):
    header, blobs, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for name, t in tensors.items():
        b = t.detach().cpu().contiguous().numpy().tobytes()
        header[name] = {'dtype': CODES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header, separators=(',', ':')).encode('utf-8')
    text += b' ' * ((8 - len(text) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 2:
        sys.exit(__doc__)
    name, out = args
    random = '--random' in sys.argv
    weights = None if random else torchvision.models.get_model_weights(name).DEFAULT
    model = torchvision.models.get_model(name, weights=weights).eval()
    os.makedirs(out, exist_ok=True)
    save_safetensors(model.state_dict(), os.path.join(out, name + '.safetensors'))
    if weights is not None:
        with open(os.path.join(out, name + '.labels.txt'), 'w') as f:
            f.write('\n'.join(weights.meta['categories']) + '\n')
    print('wrote', os.path.join(out, name + '.safetensors'))


if __name__ == '__main__':
    main()
