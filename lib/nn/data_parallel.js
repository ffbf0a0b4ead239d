// data_parallel.js - kd.nn.DataParallel, as torch.nn.DataParallel in PyTorch 1.13 (and
// kd.nn.parallel.{DataParallel, dataParallel, scatter, gather, replicate, parallelApply}).
// Without CUDA it keeps no devices and forward calls the module. With CUDA devices (deviceIds,
// default all) a forward checks that the module's parameters and buffers are on deviceIds[0],
// scatters its arguments along `dim` (tensors chunked, one chunk per device; arrays and plain
// objects walked; other values shared), replicates the module onto the devices the chunks went to
// (replica 0's parameters are differentiable views of the module's and its buffers are the
// module's own tensors, so in-place buffer updates such as BatchNorm's running statistics are
// kept; other replicas hold differentiable copies), runs each replica with its device current,
// and gathers the outputs (tensors concatenated along `dim` on outputDevice, -1 for the CPU;
// arrays and plain objects walked). Every step is made of differentiable ops (chunk, to, cat,
// view), so backward sums the replicas' gradients into the module's parameters. Replicas run one
// after the other on the JS thread (PyTorch runs them on threads); the devices' streams overlap
// their work.
'use strict';

const { KindlingError, KindlingRangeError, typeError } = require('../errors');

module.exports = function installDataParallel(kd, nn, base) {
  const { Module, stateOf, isPlainObject, parseArgs, typeName } = base;
  const Tensor = kd.Tensor;
  const valueError = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');

  // PyTorch's torch._utils._get_device_index(device, optional=True): an integer as it is, 'cuda'
  // the current device, 'cuda:N' N; a CPU device is an error.
  function deviceIndex(d) {
    if (Number.isInteger(d)) return d;
    if (typeof d === 'string') {
      const m = /^(cpu|cuda)(?::(\d+))?$/.exec(d);
      if (m === null) throw valueError(`Expected one of cpu, cuda device type at start of device string: ${d}`);
      if (m[1] === 'cpu') throw valueError(`Expected a non cpu device, but got: ${d}`);
      return m[2] === undefined ? kd.cuda.currentDevice() : Number(m[2]);
    }
    throw typeError(`Expected a device index (an integer) or a device string ('cuda:0'), got ${typeName(d)}`);
  }
  const cudaDevice = (i) => (i === -1 ? 'cpu' : `cuda:${i}`);

  // PyTorch's _check_balance: a warning when a device has less than 75% of the memory or cores of another
  function checkBalance(ids) {
    const props = ids.map((i) => {
      if (i < 0 || i >= kd.cuda.deviceCount()) throw valueError(`Invalid device id ${i} (there are ${kd.cuda.deviceCount()} CUDA devices)`);
      return kd.cuda.getDeviceProperties(i);
    });
    for (const key of ['totalMemory', 'multiProcessorCount']) {
      const v = props.map((p) => p[key]);
      const lo = v.indexOf(Math.min(...v));
      const hi = v.indexOf(Math.max(...v));
      if (v[lo] / v[hi] < 0.75) {
        process.emitWarning(`There is an imbalance between your GPUs. You may want to exclude GPU ${ids[lo]} which has less than 75% of the memory or cores of GPU ${ids[hi]}. You can do so by setting the deviceIds argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES environment variable.`);
        return;
      }
    }
  }

  const zip = (lists) => {
    const n = Math.min(...lists.map((l) => l.length));
    return Array.from({ length: n }, (_, i) => lists.map((l) => l[i]));
  };

  /** The values `inputs` gives each device: tensors chunked along dim, arrays and plain objects walked (torch's scatter). */
  function scatter(inputs, deviceIds, dim = 0) {
    const ids = deviceIds.map(deviceIndex);
    const map = (obj) => {
      if (obj instanceof Tensor) return obj.chunk(ids.length, dim).map((c, i) => c.to(cudaDevice(ids[i])));
      if (Array.isArray(obj) && obj.length > 0) return zip(obj.map(map));
      if (isPlainObject(obj) && Object.keys(obj).length > 0) {
        const keys = Object.keys(obj);
        return zip(keys.map((k) => map(obj[k]))).map((vals) => Object.fromEntries(keys.map((k, i) => [k, vals[i]])));
      }
      return ids.map(() => obj);
    };
    return map(inputs);
  }

  let warnedScalars = false;
  function gatherTensors(ts, target, dim) {
    ts.forEach((t, i) => {
      if (!(t instanceof Tensor) || !t.device.startsWith('cuda')) {
        throw new KindlingError(`Gather function not implemented for CPU tensors (the output of replica ${i} is ${t instanceof Tensor ? `on ${t.device}` : typeName(t)})`, 'KD_DEVICE_MISMATCH');
      }
    });
    if (dim === 0 && ts.every((t) => t.ndim === 0)) {
      ts = ts.map((t) => t.view([1]));
      if (!warnedScalars) {
        warnedScalars = true;
        process.emitWarning('Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.');
      }
    }
    const nd = ts[0].ndim;
    const d = dim < 0 ? dim + nd : dim;
    if (!Number.isInteger(dim) || d < 0 || d >= Math.max(nd, 1)) {
      throw new KindlingRangeError(`Dimension out of range (expected to be in range of [${-Math.max(nd, 1)}, ${Math.max(nd, 1) - 1}], but got ${dim})`);
    }
    const first = ts[0].shape;
    ts.forEach((t, i) => {
      if (t.ndim !== nd) {
        throw new KindlingError(`Expected all input tensors to have the same number of dimensions, but tensor at index ${i} has ${t.ndim} dimensions, (expected ${nd})`, 'KD_SHAPE_MISMATCH');
      }
      if (t.shape.some((s, k) => k !== d && s !== first[k])) {
        const want = first.map((s, k) => (k === d ? t.shape[k] : s));
        throw new KindlingError(`Input tensor at index ${i} has invalid shape [${t.shape.join(', ')}], but expected [${want.join(', ')}]`, 'KD_SHAPE_MISMATCH');
      }
    });
    const device = cudaDevice(target);
    return kd.cat(ts.map((t) => t.to(device)), d);
  }

  /** The replicas' outputs as one value on targetDevice (-1: the CPU): tensors concatenated along dim (torch's gather). */
  function gather(outputs, targetDevice, dim = 0) {
    const target = targetDevice === -1 ? -1 : deviceIndex(targetDevice);
    const map = (outs) => {
      const out = outs[0];
      if (out instanceof Tensor) return gatherTensors(outs, target, dim);
      if (out === null || out === undefined) return null;
      if (isPlainObject(out)) {
        const n = Object.keys(out).length;
        if (!outs.every((o) => isPlainObject(o) && Object.keys(o).length === n)) throw valueError('All dicts must have the same number of keys');
        return Object.fromEntries(Object.keys(out).map((k) => [k, map(outs.map((o) => o[k]))]));
      }
      if (Array.isArray(out)) return zip(outs).map(map);
      throw typeError(`DataParallel: cannot gather outputs of type ${typeName(out)} (tensors, arrays, plain objects or null)`);
    };
    return map(outputs);
  }

  // A tensor for replica j on device `dev`: differentiable unless detach; replica 0 (on the
  // module's own device) shares the original's storage (the tensor itself when detached).
  function broadcastTo(t, j, dev, detach) {
    if (detach) return j === 0 ? t : kd.noGrad(() => t.to(dev));
    return j === 0 ? t.view(t.shape) : t.to(dev);
  }

  /** One replica of `network` per device (torch's replicate): see the file header. */
  function replicate(network, devices, detach = false) {
    if (!(network instanceof Module)) throw typeError(`replicate: expected a kd.nn.Module, got ${typeName(network)}`);
    if (devices.length === 0) return [];
    const devs = devices.map((d) => cudaDevice(deviceIndex(d)));
    const modules = network.modules();
    const index = new Map(modules.map((m, i) => [m, i]));
    const tensorCopies = new Map(); // original tensor -> its copy per replica (a tensor shared by two modules stays shared)
    const copiesOf = (t, grad) => {
      if (!tensorCopies.has(t)) tensorCopies.set(t, devs.map((dev, j) => broadcastTo(t, j, dev, !grad)));
      return tensorCopies.get(t);
    };
    const SKIP = new Set(['self', 'params', 'buffers', 'modules', 'nonPersistent', 'swapping']);
    const copies = devs.map(() => modules.map((m) => {
      // PyTorch's _replicate_for_data_parallel: the same class and attributes, the same hooks
      const r = new Module();
      Object.setPrototypeOf(r, Object.getPrototypeOf(m));
      const s = stateOf(m);
      const rs = stateOf(r);
      for (const k of Object.keys(s)) if (!SKIP.has(k)) rs[k] = s[k];
      const registered = new Set([...s.params, ...s.buffers, ...s.modules]);
      for (const key of Object.getOwnPropertyNames(m)) {
        if (!registered.has(key)) Object.defineProperty(r, key, Object.getOwnPropertyDescriptor(m, key));
      }
      return r;
    }));
    modules.forEach((m, i) => {
      const s = stateOf(m);
      devs.forEach((_, j) => {
        const r = copies[j][i];
        // the copies are intermediates of this forward, not tensors the replica owns (Note
        // [Tensor attributes] in module.js): kd.tidy scopes free them like the forward's others
        stateOf(r).swapping++;
        for (const key of s.modules) r.registerModule(key, m[key] ? copies[j][index.get(m[key])] : null);
        // replicas' parameters are not leaves: plain tensor attributes, as PyTorch's
        for (const key of s.params) {
          if (m[key]) r[key] = copiesOf(m[key], !detach)[j];
          else r.registerParameter(key, null);
        }
        for (const key of s.buffers) {
          const b = m[key];
          r.registerBuffer(key, b ? copiesOf(b, b.requiresGrad && !detach)[j] : null, { persistent: !s.nonPersistent.has(key) });
        }
        stateOf(r).swapping--;
      });
    });
    return copies.map((c) => c[0]);
  }

  // the CUDA device of the first tensor in an input (torch's get_a_var), or null
  function deviceOf(obj) {
    if (obj instanceof Tensor) return obj.device.startsWith('cuda') ? Number(obj.device.slice(5)) : null;
    const vals = Array.isArray(obj) ? obj : isPlainObject(obj) ? Object.values(obj) : [];
    for (const v of vals) {
      const d = deviceOf(v);
      if (d !== null) return d;
    }
    return null;
  }

  /** Runs modules[i](...inputs[i]) with devices[i] as the current CUDA device (torch's parallel_apply). */
  function parallelApply(modules, inputs, devices) {
    if (modules.length !== inputs.length || (devices && devices.length !== modules.length)) {
      throw valueError(`parallelApply: ${modules.length} modules, ${inputs.length} inputs${devices ? ` and ${devices.length} devices` : ''}: expected as many of each`);
    }
    const prev = kd.cuda.currentDevice();
    return modules.map((m, i) => {
      const input = Array.isArray(inputs[i]) ? inputs[i] : [inputs[i]];
      const dev = devices ? deviceIndex(devices[i]) : deviceOf(input);
      try {
        if (dev !== null) kd.cuda.setDevice(dev);
        return m(...input);
      } catch (e) {
        if (e instanceof Error) e.message = `Caught ${e.name} in replica ${i} on device ${dev}.\nOriginal ${e.message}`;
        throw e;
      } finally {
        kd.cuda.setDevice(prev);
      }
    });
  }

  // DataParallel's forward on CUDA devices `ids` (torch's DataParallel.forward / data_parallel)
  function run(module, args, ids, outputDevice, dim, detach) {
    const src = cudaDevice(ids[0]);
    for (const t of [...module.parameters(), ...module.buffers()]) {
      if (t.device !== src) {
        throw new KindlingError(`module must have its parameters and buffers on device ${src} (device_ids[0]) but found one of them on device: ${t.device}`, 'KD_DEVICE_MISMATCH');
      }
    }
    let scattered = args.length ? scatter(args, ids, dim) : [];
    if (scattered.length === 0) scattered = [[]];
    if (ids.length === 1) return module(...scattered[0]);
    const used = ids.slice(0, scattered.length);
    return gather(parallelApply(replicate(module, used, detach), scattered, used), outputDevice, dim);
  }

  class DataParallel extends Module {
    /** DataParallel(module, {deviceIds = all CUDA devices, outputDevice = deviceIds[0], dim = 0}). */
    constructor(...args) {
      super();
      const o = parseArgs('DataParallel()', args, ['module', 'deviceIds', 'outputDevice', 'dim'], { deviceIds: null, outputDevice: null, dim: 0 });
      if (!(o.module instanceof Module)) throw typeError(`DataParallel: module must be a kd.nn.Module, got ${typeName(o.module)}`);
      if (!kd.cuda.isAvailable()) {
        this.module = o.module;
        this.deviceIds = [];
        return;
      }
      const ids = o.deviceIds === null ? Array.from({ length: kd.cuda.deviceCount() }, (_, i) => i) : o.deviceIds;
      if (!Array.isArray(ids)) throw typeError(`DataParallel: deviceIds must be an array of device indices, got ${typeName(ids)}`);
      if (ids.length === 0) throw new KindlingRangeError('DataParallel: deviceIds is empty (list index out of range)');
      if (!Number.isInteger(o.dim)) throw typeError(`DataParallel: dim must be an integer, got ${String(o.dim)}`);
      this.dim = o.dim;
      this.module = o.module;
      this.deviceIds = ids.map(deviceIndex);
      this.outputDevice = deviceIndex(o.outputDevice === null ? ids[0] : o.outputDevice);
      this.srcDeviceObj = cudaDevice(this.deviceIds[0]);
      checkBalance(this.deviceIds);
      if (this.deviceIds.length === 1) this.module.to(this.srcDeviceObj);
    }

    forward(...inputs) {
      return kd.profiler.recordFunction('DataParallel.forward', () => {
        if (this.deviceIds.length === 0) return this.module(...inputs);
        return run(this.module, inputs, this.deviceIds, this.outputDevice, this.dim, !kd.isGradEnabled());
      });
    }
  }

  /** module(...inputs) evaluated as DataParallel would, without a wrapper module (torch's data_parallel). */
  function dataParallel(module, inputs, options = {}) {
    const { deviceIds = null, outputDevice = null, dim = 0 } = options;
    if (!(module instanceof Module)) throw typeError(`dataParallel: module must be a kd.nn.Module, got ${typeName(module)}`);
    const args = Array.isArray(inputs) ? inputs : inputs === null || inputs === undefined ? [] : [inputs];
    const ids = (deviceIds === null ? Array.from({ length: kd.cuda.deviceCount() }, (_, i) => i) : deviceIds).map(deviceIndex);
    if (ids.length === 0) throw new KindlingRangeError('dataParallel: deviceIds is empty (list index out of range)');
    return run(module, args, ids, deviceIndex(outputDevice === null ? ids[0] : outputDevice), dim, false);
  }

  nn.DataParallel = DataParallel;
  nn.parallel = Object.assign(nn.parallel || {}, { DataParallel, dataParallel, scatter, gather, replicate, parallelApply });
};
