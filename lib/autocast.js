// autocast.js - automatic mixed precision scopes: kd.autocast, kd.isAutocastEnabled,
// kd.getAutocastDtype (and kd.amp.autocast), after PyTorch 1.13's torch.autocast. The casting
// itself happens in C (src/dispatch/autocast.c: the Autocast dispatch key, the op policies of
// src/ops/autocast_policy.js, the cast cache); this file keeps the scopes.
//
// The state (enabled and dtype per device type, cacheEnabled, nesting) is thread-local in C and
// set as a whole. A scope given a sync function sets it, runs fn and restores it; given an async
// function it also runs fn inside an AsyncLocalStorage scope, and while any such scope is pending
// every op call re-applies the state of the scope it runs in, with the grad modes' mechanism
// (Note [Grad modes and async functions] in lib/autograd.js): rt.syncMode is chained and
// rt.modeActive also counts pending autocast scopes. So concurrent async scopes with different
// settings never see each other's state. The cast cache is emptied when the last outermost scope
// exits (PyTorch: autocast_decrement_nesting() == 0 -> clear_autocast_cache()).
'use strict';

const { AsyncLocalStorage } = require('node:async_hooks');
const { KindlingError, typeError } = require('./errors');
const { checkDtype } = require('./dtypes');

const DEVICE_TYPES = ['cpu', 'cuda'];
const FLOATING = new Set(['float32', 'float64', 'float16', 'bfloat16']);

module.exports = function installAutocast(kd, N, rt) {
  const C = N.autocast;
  const als = new AsyncLocalStorage();
  const DEFAULT = Object.freeze({ cpu: false, cpuDtype: 'bfloat16', cuda: false, cudaDtype: 'float16', cacheEnabled: true, nesting: 0 });
  let globalState = DEFAULT;
  let current = DEFAULT; // what C holds
  let pendingAsync = 0;
  let outermost = 0; // scopes entered at nesting 0 and not yet left

  function apply(s) {
    if (s === current) return;
    C.setState(s.cpu, s.cpuDtype, s.cuda, s.cudaDtype, s.cacheEnabled, s.nesting);
    current = s;
  }

  // rt.modeActive: autograd's async scopes or ours (lib/autograd.js assigns its own flag).
  let gradActive = !!rt.modeActive;
  Object.defineProperty(rt, 'modeActive', {
    get() { return gradActive || pendingAsync > 0; },
    set(v) { gradActive = v; },
    configurable: true,
    enumerable: true,
  });
  const gradSync = rt.syncMode;
  rt.syncMode = () => {
    gradSync();
    apply(als.getStore() || globalState);
  };
  const stateNow = () => (pendingAsync > 0 ? als.getStore() || globalState : current);

  function checkDeviceType(deviceType, what) {
    if (!DEVICE_TYPES.includes(deviceType)) {
      throw new KindlingError(`${what}: User specified autocast device_type must be 'cuda' or 'cpu', got ${
        typeof deviceType === 'string' ? `'${deviceType}'` : String(deviceType)}`, 'KD_INVALID_ARGUMENT');
    }
  }

  function leave(prev, wasOutermost) {
    apply(prev);
    if (wasOutermost && --outermost === 0) C.clearCache();
  }

  /**
   * Runs fn (sync or async) with automatic mixed precision for one device type, as PyTorch's
   * `torch.autocast(device_type, dtype, enabled, cache_enabled)`.
   */
  function autocast(options, fn) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw typeError('autocast(options, fn): options must be an object {deviceType, dtype?, enabled?, cacheEnabled?}');
    }
    if (typeof fn !== 'function') throw typeError('autocast(options, fn) expects a function');
    const { deviceType, dtype, enabled = true, cacheEnabled } = options;
    checkDeviceType(deviceType, 'autocast');
    if (typeof enabled !== 'boolean') throw typeError('autocast: enabled must be a boolean');
    if (cacheEnabled !== undefined && typeof cacheEnabled !== 'boolean') throw typeError('autocast: cacheEnabled must be a boolean');
    if (rt.modeActive) rt.syncMode();
    const base = stateNow();
    let fast = dtype === undefined ? base[`${deviceType}Dtype`] : checkDtype(dtype, 'autocast');
    let on = enabled;
    if (dtype !== undefined && !FLOATING.has(fast)) {
      throw new KindlingError(`autocast: dtype must be a floating point dtype (float16 or bfloat16), got ${fast}`, 'KD_INVALID_ARGUMENT');
    }
    // PyTorch 1.13 warns and disables for a dtype its device type does not autocast to
    if (on && deviceType === 'cpu' && fast !== 'bfloat16') {
      process.emitWarning('In CPU autocast, but the target dtype is not supported. Disabling autocast.\n' +
        'CPU Autocast only supports dtype of torch.bfloat16 currently.', { type: 'UserWarning', code: 'KD_AUTOCAST_DTYPE' });
      on = false;
    } else if (on && deviceType === 'cuda' && fast !== 'float16' && fast !== 'bfloat16') {
      process.emitWarning('In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n' +
        'CUDA Autocast only supports dtypes of torch.float16 and torch.bfloat16 currently.', { type: 'UserWarning', code: 'KD_AUTOCAST_DTYPE' });
      on = false;
    }
    const s = Object.freeze({
      ...base, [deviceType]: on, [`${deviceType}Dtype`]: fast, // set even when disabled, as PyTorch
      cacheEnabled: cacheEnabled === undefined ? base.cacheEnabled : cacheEnabled, nesting: base.nesting + 1,
    });
    const prev = current;
    const wasOutermost = base.nesting === 0;
    if (wasOutermost) outermost++;
    apply(s);
    let r;
    try {
      r = als.run(s, fn);
    } catch (e) {
      leave(prev, wasOutermost);
      throw e;
    }
    if (r && typeof r.then === 'function') {
      apply(prev);
      pendingAsync++;
      return Promise.resolve(r).finally(() => {
        pendingAsync--;
        if (wasOutermost && --outermost === 0) C.clearCache();
        if (rt.modeActive) rt.syncMode();
        else apply(globalState);
      });
    }
    leave(prev, wasOutermost);
    return r;
  }

  kd.autocast = autocast;
  /** Whether autocast is on for the device type ('cpu' or 'cuda') here. */
  kd.isAutocastEnabled = function isAutocastEnabled(deviceType) {
    checkDeviceType(deviceType, 'isAutocastEnabled');
    return stateNow()[deviceType];
  };
  /** The lower-precision dtype autocast casts to for the device type here. */
  kd.getAutocastDtype = function getAutocastDtype(deviceType) {
    checkDeviceType(deviceType, 'getAutocastDtype');
    return stateNow()[`${deviceType}Dtype`];
  };

  // test hooks (not public API)
  const internal = kd._internal || (kd._internal = {});
  /** [casts, cacheHits, cached]: casts autocast made, cast-cache hits, entries now cached. */
  internal.autocastStats = () => {
    const [casts, cacheHits, cached] = C.stats();
    return { casts, cacheHits, cached };
  };
  /** An op's autocast policy for a device type ('lower', 'fp32', ... or null). */
  internal.autocastPolicy = (op, deviceType) => {
    checkDeviceType(deviceType, 'autocastPolicy');
    const p = C.policy(op, deviceType);
    if (p === undefined) throw new KindlingError(`autocastPolicy: unknown op '${op}'`, 'KD_INVALID_ARGUMENT');
    return p;
  };
  /** Replaces an op's policy for a device type (null: the table's again); returns whether the op
   * has an Autocast kernel (only ops with a policy somewhere do). Lets tests run the CUDA
   * policies on CPU tensors. */
  internal.autocastSetPolicy = (op, deviceType, policy) => C.setPolicy(op, deviceType, policy);
  /** The dtypes a policy casts tensors of the given dtypes to: {dtypes, setDtype}. */
  internal.autocastPlan = (policy, lowerDtype, dtypes) => {
    const [to, setDtype] = C.plan(policy, lowerDtype, dtypes);
    return { dtypes: to, setDtype };
  };
  return autocast;
};
