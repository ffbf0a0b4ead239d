// moduleinfo_helpers.js - replays the samples of PyTorch's module test database (ModuleInfo)
// recorded by tools/opinfo/generate_modules.py (test/fixtures/moduleinfo/*.json.gz) on kindling:
// builds kd.nn.<Module> with the recorded constructor arguments, moves it to the sample's dtype
// and device, loads PyTorch's state dict, runs the forward with the recorded arguments and
// compares the outputs, the buffers the forward changed and the gradients of the inputs and
// parameters with PyTorch's. The values, tolerances and known-failure rules are the OpInfo
// harness's (test/opinfo_helpers.js). Used by test/moduleinfo.test.js and
// tools/opinfo/module_report.js.
'use strict';

const path = require('node:path');

const { kd, deviceSyncPoint } = require('./helpers');
const opinfo = require('./opinfo_helpers');

const {
  buildValue, buildTensor, outputMismatch, tensorMismatch, gradsMismatch, describeError, isKdError,
} = opinfo;

const FIXTURES = path.join(__dirname, 'fixtures', 'moduleinfo');
const KNOWN_FAILURES = path.join(__dirname, 'moduleinfo_known_failures.json');

/** The recorded ModuleInfos of dir (default test/fixtures/moduleinfo): [{module, torch, samples}], in name order. */
const loadAll = (dir = FIXTURES) => opinfo.loadAll(dir);

/** {cpu: {Module: {reason, forward: [ids], grad: [ids], mayDiffer?}}, cuda: {...}} */
const loadKnownFailures = () => opinfo.loadKnownFailures(KNOWN_FAILURES);

/** Whether kindling has the module of a fixture (kd.nn.<Module>). */
const hasModule = (doc) => typeof kd.nn[doc.module] === 'function';

/**
 * Note [Tolerance of module samples]: an output element of a module adds up at most as many
 * products as the largest fan-in of its parameters and inputs (a weight's elements per output
 * row, an input's last dimension) times the depth of the layers stacked: the OpInfo tolerance
 * for that many terms (reductionTol) is used, with the depth taken as the number of parameters.
 */
function termsOf(s, leaves) {
  let fan = 1;
  const state = Object.values(s.state || {});
  for (const spec of state) if (spec.shape.length > 1) fan = Math.max(fan, spec.shape.slice(1).reduce((a, b) => a * b, 1));
  for (const t of leaves) if (t.ndim) fan = Math.max(fan, t.shape[t.ndim - 1]);
  return fan * Math.max(1, state.length);
}

const withOptions = (args, kwargs) => (kwargs && Object.keys(kwargs).length ? [...args, kwargs] : args);

/** A constructor argument: buildValue's, and {$module, args, kwargs} -> new kd.nn[$module](...). */
function buildCtorValue(v, device) {
  if (Array.isArray(v)) return v.map((x) => buildCtorValue(x, device));
  if (v !== null && typeof v === 'object' && '$module' in v) {
    const Cls = kd.nn[v.$module];
    if (typeof Cls !== 'function') throw new TypeError(`kd.nn has no ${v.$module}`);
    return new Cls(...withOptions(buildCtorValue(v.args, device), v.kwargs && buildCtorValue(v.kwargs, device)));
  }
  if (v !== null && typeof v === 'object' && !('$t' in v || '$dtype' in v || '$f' in v || '$fn' in v)) {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = buildCtorValue(x, device);
    return o;
  }
  return buildValue(v, device, null);
}

/**
 * Runs one sample on device: {missing: true} when kindling lacks the module, else {forward: null |
 * reason it fails, grad: undefined (none recorded) | null | reason}. A sample PyTorch rejects
 * passes when kindling rejects it with a kindling error.
 */
function runModuleSample(doc, s, device = 'cpu') {
  if (!hasModule(doc)) return { missing: true };
  const res = { forward: null, grad: undefined };
  const wantGrad = s.grads !== undefined;
  let m;
  try {
    const c = s.constructor;
    m = new kd.nn[doc.module](...withOptions(buildCtorValue(c.args, device), c.kwargs && buildCtorValue(c.kwargs, device)));
    m.to({ dtype: s.dtype, device });
    m.train(s.training);
    if (s.state) {
      const sd = {};
      for (const [k, spec] of Object.entries(s.state)) sd[k] = buildTensor(spec, device, null);
      m.loadStateDict(sd);
    }
  } catch (e) {
    res.forward = `building the module failed: ${describeError(e)}`;
    if (wantGrad) res.grad = 'no forward';
    return res;
  }
  const leaves = [];
  let r;
  try {
    const f = s.forward;
    const args = buildValue(f.args, device, wantGrad ? leaves : null);
    const kwargs = f.kwargs ? buildValue(f.kwargs, device, wantGrad ? leaves : null) : null;
    r = s.noGrad ? kd.noGrad(() => m(...withOptions(args, kwargs))) : m(...withOptions(args, kwargs));
    if (device !== 'cpu') deviceSyncPoint(r);
  } catch (e) {
    if (s.error) {
      if (!isKdError(e)) res.forward = `PyTorch raises "${s.error.message}"; kindling threw a non-kindling ${describeError(e)}`;
      return res;
    }
    res.forward = `forward threw ${describeError(e)}`;
    if (wantGrad) res.grad = 'no forward';
    return res;
  }
  if (s.error) {
    res.forward = `PyTorch raises "${s.error.message}"; kindling returned a result`;
    return res;
  }
  const terms = termsOf(s, leaves);
  res.forward = outputMismatch(r, s.out, 'output', { terms, compare: s.random ? 'shape' : 'values' });
  if (!res.forward && s.stateAfter) {
    const now = m.stateDict();
    for (const [k, spec] of Object.entries(s.stateAfter)) {
      res.forward = now[k] === undefined ? `state ${k}: missing after the forward` : tensorMismatch(now[k], spec, `state ${k} after the forward`, { terms, compare: 'values' });
      if (res.forward) break;
    }
  }
  if (wantGrad) res.grad = res.forward ? 'forward differs' : gradMismatch(m, s, r, leaves, device, terms);
  return res;
}

/** Gradients of the inputs and parameters for the recorded gradOutputs, against PyTorch's. */
function gradMismatch(m, s, r, leaves, device, terms) {
  if (leaves.length !== s.grads.length) return `${leaves.length} inputs require grad, PyTorch has ${s.grads.length}`;
  const params = new Map(m.namedParameters());
  const names = Object.keys(s.paramGrads);
  for (const n of names) if (!params.has(n)) return `no parameter ${n} (kindling has ${[...params.keys()].join(', ')})`;
  if (params.size !== names.length) return `parameters ${[...params.keys()].join(', ')}; PyTorch has ${names.join(', ')}`;
  return gradsMismatch(r, s.gradOutputs, [...leaves, ...names.map((n) => params.get(n))],
    [...s.grads, ...names.map((n) => s.paramGrads[n])],
    [...leaves.map((_, i) => `grad[${i}]`), ...names.map((n) => `grad of ${n}`)], device, terms);
}

module.exports = { loadAll, loadKnownFailures, hasModule, runModuleSample, KNOWN_FAILURES, FIXTURES };
