// module_devices.js - kd.nn.Module.ipu() and xpu(): PyTorch 1.13's methods for Graphcore IPUs and
// Intel GPUs (XPU). kindling, like a PyTorch build without those backends, has neither device, so
// they do what PyTorch does there: self._apply(t => t.ipu(device)) fails at the first parameter
// or buffer with PyTorch's message (code KD_NOT_SUPPORTED; a device of another type or a bare
// index: 'Invalid device, must be <type> device', KD_INVALID_ARGUMENT), and a module without
// tensors is returned as it is.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installModuleDevices(kd, nn, { Module }) {
  // The error of Tensor.<type>(device) on a build without the backend.
  function unavailable(type, device) {
    if (typeof device === 'number') {
      if (!Number.isInteger(device)) return typeError(`${type}(): device must be an integer or a string, got ${device}`);
      if (device < 0) return new KindlingError('Device index must not be negative', 'KD_INVALID_ARGUMENT');
      return new KindlingError(`Invalid device, must be ${type} device`, 'KD_INVALID_ARGUMENT');
    }
    if (typeof device === 'string') {
      if (!new RegExp(`^${type}(:\\d+)?$`).test(device)) return new KindlingError(`Invalid device, must be ${type} device`, 'KD_INVALID_ARGUMENT');
    } else if (device !== undefined && device !== null) {
      return typeError(`${type}(): device must be an integer or a string, got ${typeof device}`);
    }
    return new KindlingError(`kindling is not linked with support for ${type} devices`, 'KD_NOT_SUPPORTED');
  }
  const move = (type) => function (device) {
    const err = unavailable(type, device);
    return this._apply(() => { throw err; });
  };
  /** Moves parameters and buffers to the IPU: kindling has no IPU backend, so this fails as PyTorch without one does. ipu(device = null). */
  Module.prototype.ipu = move('ipu');
  /** Moves parameters and buffers to the XPU: kindling has no XPU backend, so this fails as PyTorch without one does. xpu(device = null). */
  Module.prototype.xpu = move('xpu');
};
