"""api_compare.py - lists PyTorch's public names of the training surface (torch.nn classes,
nn.functional, nn.init, nn.utils and its submodules, the optimizers, optim.lr_scheduler,
optim.swa_utils, utils.data, the methods of nn.Module) into tools/api_names.json, which
tools/api_compare.js looks up in kindling (so the comparison runs without PyTorch).

Run:  /usr/bin/python3 tools/api_compare.py

A name is public when it does not start with an underscore and is a class or function the
namespace defines or re-exports (not a typing alias, an imported Python module or helper). The
few public names left out are listed in EXCLUDED below with the reason; the JSON carries them
too, so the report can say what it does not count.
"""
import inspect
import json
import os
import warnings

warnings.filterwarnings('ignore')
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.nn.init  # noqa: E402
import torch.nn.utils  # noqa: E402
import torch.optim.lr_scheduler  # noqa: E402
import torch.optim.swa_utils  # noqa: E402
import torch.utils.data  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'api_names.json')

DEPRECATED_INIT = 'deprecated alias of the in-place function (PyTorch warns "nn.init.X is now deprecated in favor of nn.init.X_")'
DATAPIPES = 'DataPipes: the prototype graph-of-iterators API (moved out to torchdata), not Dataset/DataLoader'
HOOK_OBJECT = 'the hook object that spectral_norm()/weight_norm() install on a module; users call the functions'
TORCH_FUNCTION = 'Python machinery of __torch_function__ overrides and argument checking, not an nn function'

# Public names PyTorch exports that kindling's comparison does not count, with the reason.
EXCLUDED = {
    'nn': {
        'Container': 'deprecated (PyTorch warns; its own ModuleInfo tests skip it)',
        'NLLLoss2d': 'deprecated alias of NLLLoss (PyTorch warns; its own ModuleInfo tests skip it)',
    },
    'nn.functional': {
        'boolean_dispatch': TORCH_FUNCTION,
        'handle_torch_function': TORCH_FUNCTION,
        'has_torch_function': TORCH_FUNCTION,
        'has_torch_function_unary': TORCH_FUNCTION,
        'has_torch_function_variadic': TORCH_FUNCTION,
        'assert_int_or_pair': TORCH_FUNCTION,
    },
    'nn.init': {n: DEPRECATED_INIT for n in (
        'constant', 'dirac', 'eye', 'kaiming_normal', 'kaiming_uniform', 'normal', 'orthogonal',
        'sparse', 'uniform', 'xavier_normal', 'xavier_uniform')},
    'nn.utils': {
        'clip_grad_norm': 'deprecated alias of clip_grad_norm_ (PyTorch warns)',
        'rnn.PackedSequence_': 'the NamedTuple base class of rnn.PackedSequence',
        'rnn.bind': 'a TorchScript helper (applies a function to an Optional)',
        'spectral_norm.SpectralNorm': HOOK_OBJECT,
        'spectral_norm.SpectralNormLoadStateDictPreHook': HOOK_OBJECT,
        'spectral_norm.SpectralNormStateDictHook': HOOK_OBJECT,
        'weight_norm.WeightNorm': HOOK_OBJECT,
    },
    'utils.data': {n: DATAPIPES for n in (
        'DFIterDataPipe', 'DataChunk', 'DataLoader2', 'IterDataPipe', 'MapDataPipe',
        'functional_datapipe', 'guaranteed_datapipes_determinism', 'non_deterministic',
        'argument_validation', 'runtime_validation', 'runtime_validation_disabled')},
}


def public(mod, keep):
    """Public names of module mod whose value passes keep(value)."""
    return sorted(n for n in dir(mod) if not n.startswith('_') and keep(getattr(mod, n)))


def is_fn(v):
    return callable(v) and not inspect.isclass(v) and not inspect.ismodule(v) and not _is_typing(v)


def _is_typing(v):
    return getattr(v, '__module__', None) == 'typing'


def nn_classes():
    def keep(v):
        return inspect.isclass(v) and (issubclass(v, nn.Module) or issubclass(v, torch.Tensor))
    return public(nn, keep)


def utils_names():
    """nn.utils and its public submodules, recursively: 'clip_grad_norm_' for names nn.utils
    exports itself, 'rnn.pack_sequence' for those only a submodule has."""
    import pkgutil
    import importlib
    top = {}
    for n in public(torch.nn.utils, lambda v: not inspect.ismodule(v)):
        v = getattr(torch.nn.utils, n)
        if is_fn(v) or inspect.isclass(v):
            top[id(v)] = n
    names = set(top.values())
    for info in pkgutil.iter_modules(torch.nn.utils.__path__):
        if info.name.startswith('_'):
            continue
        sub = importlib.import_module('torch.nn.utils.' + info.name)
        for n in public(sub, lambda v: inspect.isclass(v) or is_fn(v)):
            v = getattr(sub, n)
            if not (getattr(v, '__module__', '') or '').startswith('torch.nn.utils'):
                continue  # imported from elsewhere (torch, typing, collections)
            if id(v) in top:
                continue  # counted under its nn.utils name
            names.add('%s.%s' % (info.name, n))
    return sorted(names)


def main():
    lrs = torch.optim.lr_scheduler
    namespaces = {
        'nn': nn_classes(),
        'nn.functional': public(F, is_fn),
        'nn.init': public(torch.nn.init, lambda v: inspect.isfunction(v) and v.__module__ == 'torch.nn.init'),
        'nn.utils': utils_names(),
        'optim': public(torch.optim, lambda v: inspect.isclass(v) and issubclass(v, torch.optim.Optimizer)),
        'optim.lr_scheduler': sorted(lrs.__all__),
        'optim.swa_utils': public(torch.optim.swa_utils, lambda v: (inspect.isclass(v) or inspect.isfunction(v))
                                  and v.__module__ == 'torch.optim.swa_utils'),
        'utils.data': sorted(n for n in torch.utils.data.__all__
                             if not n.startswith('_') and not inspect.ismodule(getattr(torch.utils.data, n, torch))),  # (__all__ names 'collate', which 1.13 lacks)
        'nn.Module methods': public(nn.Module, lambda v: callable(v) and not inspect.isclass(v)),
    }
    out = {'torch': torch.__version__.split('a')[0], 'namespaces': {}}
    for ns, names in namespaces.items():
        excluded = EXCLUDED.get(ns, {})
        for n in excluded:
            assert n in names, '%s.%s is excluded but not listed' % (ns, n)
        out['namespaces'][ns] = {'names': [n for n in names if n not in excluded], 'excluded': excluded}
        print('%-20s %d names (%d excluded)' % (ns, len(names) - len(excluded), len(excluded)))
    with open(OUT, 'w') as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write('\n')


if __name__ == '__main__':
    main()
