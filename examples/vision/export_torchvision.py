#!/usr/bin/env python3
"""export_torchvision.py - writes a torchvision classification model's state dict as safetensors
(and its class names, one a line) for examples/vision/classify.js and examples/vision/models.

  python3 examples/vision/export_torchvision.py resnet18 DIR            # pretrained (downloads)
  python3 examples/vision/export_torchvision.py resnet18 DIR --random   # random weights, offline

writes DIR/NAME.safetensors (every entry of model.state_dict(), names unchanged, num_batches_tracked
included) and, for pretrained weights, DIR/NAME.labels.txt (weights.meta["categories"]). Needs
torch and torchvision only: the safetensors file is written by tools/safetensors_check.py's
write_file (the layout by hand, as Python's safetensors package writes it).
"""
import os
import sys

import torch  # noqa: F401  (torchvision needs it; named here so a missing install says so first)
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
from safetensors_check import write_file  # noqa: E402  (the safetensors layout, written by hand)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 2:
        sys.exit(__doc__)
    name, out = args
    random = '--random' in sys.argv
    weights = None if random else torchvision.models.get_model_weights(name).DEFAULT
    model = torchvision.models.get_model(name, weights=weights).eval()
    os.makedirs(out, exist_ok=True)
    write_file(os.path.join(out, name + '.safetensors'), dict(model.state_dict()), {'format': 'pt'})
    if weights is not None:
        with open(os.path.join(out, name + '.labels.txt'), 'w') as f:
            f.write('\n'.join(weights.meta['categories']) + '\n')
    print('wrote', os.path.join(out, name + '.safetensors'))


if __name__ == '__main__':
    main()
