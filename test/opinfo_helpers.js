// opinfo_helpers.js - replays the samples of PyTorch's OpInfo database recorded by
// tools/opinfo/generate.py (test/fixtures/opinfo/*.json.gz) on kindling: builds the inputs
// (strided ones included), calls the op as the fixture says, and compares outputs (values with
// assert_close tolerances per dtype, Note [Tolerance of reductions]), gradients and errors with
// PyTorch's. Used by test/opinfo.test.js and tools/opinfo/report.js.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const { kd, reductionTol, reductionLength, closeEnough, deviceSyncPoint } = require('./helpers');

const FIXTURES = path.join(__dirname, 'fixtures', 'opinfo');
const KNOWN_FAILURES = path.join(__dirname, 'opinfo_known_failures.json');

const TYPED = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int16: Int16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
  float16: Uint16Array, bfloat16: Uint16Array, // the raw bits
};

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function halfBitsToNumber(bits, dtype) {
  if (dtype === 'bfloat16') {
    u32[0] = bits << 16;
    return f32[0];
  }
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The recorded OpInfos: [{opinfo, fn, form, compare?, samples}], in name order (the .json.gz files of dir). */
function loadAll(dir = FIXTURES) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json.gz')).sort()
    .map((f) => JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, f))).toString('utf8')));
}

/** {cpu: {opinfo: {reason, forward: [ids], grad: [ids], mayDiffer?: {forward?: [ids], grad?: [ids]}}}, cuda: {...}} */
function loadKnownFailures(file = KNOWN_FAILURES) {
  if (!fs.existsSync(file)) return { cpu: {}, cuda: {} };
  const k = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { cpu: k.cpu || {}, cuda: k.cuda || {} };
}

/** Flat JS values of an encoded tensor (numbers; booleans for bool). */
function decodeValues(spec) {
  const buf = Buffer.from(spec.b64, 'base64');
  const T = TYPED[spec.$t];
  const bytes = new Uint8Array(buf.byteLength);
  bytes.set(buf);
  const arr = new T(bytes.buffer, 0, bytes.byteLength / T.BYTES_PER_ELEMENT);
  const out = new Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    if (spec.$t === 'bool') out[i] = arr[i] !== 0;
    else if (spec.$t === 'float16' || spec.$t === 'bfloat16') out[i] = halfBitsToNumber(arr[i], spec.$t);
    else out[i] = typeof arr[i] === 'bigint' ? Number(arr[i]) : arr[i];
  }
  return { arr, values: out };
}

/** An encoded tensor -> a kindling tensor on device (strided as recorded; a leaf requiring grad if it did). */
function buildTensor(spec, device, leaves) {
  const { arr } = decodeValues(spec);
  const base = kd.tensor(arr, { dtype: spec.$t, device });
  let t = spec.strides ? base.asStrided(spec.shape, spec.strides, 0) : base.reshape(spec.shape);
  if (spec.rg && leaves) {
    t = t.detach().requiresGrad_(true);
    leaves.push(t);
  }
  return t;
}

/** An encoded argument -> the JS value kindling is given. */
function buildValue(v, device, leaves) {
  if (Array.isArray(v)) return v.map((x) => buildValue(x, device, leaves));
  if (v !== null && typeof v === 'object') {
    if ('$t' in v) return buildTensor(v, device, leaves);
    if ('$dtype' in v) return v.$dtype;
    if ('$f' in v) return v.$f === 'nan' ? NaN : v.$f === 'inf' ? Infinity : -Infinity;
    if ('$fn' in v) return functionOf(v.$fn); // a function argument (an activation), by its kindling path
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = buildValue(x, device, leaves);
    return o;
  }
  return v;
}

function functionOf(fnPath) {
  let o = kd;
  for (const seg of fnPath.split('.')) o = o && o[seg];
  return o;
}

/** Calls the op of a fixture with built args/kwargs. */
function callOp(doc, args, kwargs) {
  const extra = kwargs && Object.keys(kwargs).length ? [kwargs] : [];
  if (doc.form === 'method') {
    const self = args[0];
    if (!(self instanceof kd.Tensor)) throw new TypeError(`${doc.fn}: the method's self is not a Tensor`);
    return self[doc.fn](...args.slice(1), ...extra);
  }
  return functionOf(doc.fn)(...args, ...extra);
}

/** The tensors of a result, flattened in order (as PyTorch's tuple/list outputs). */
function flatTensors(r) {
  if (r instanceof kd.Tensor) return [r];
  if (Array.isArray(r)) return r.flatMap(flatTensors);
  return [];
}

function flatSpecs(e) {
  if (e !== null && typeof e === 'object' && '$t' in e) return [e];
  if (Array.isArray(e)) return e.flatMap(flatSpecs);
  return [];
}

function tensorValues(t) {
  const d = t.cpu().dataSync();
  const out = new Array(d.length);
  for (let i = 0; i < d.length; i++) {
    out[i] = t.dtype === 'bool' ? d[i] !== 0 : (typeof d[i] === 'bigint' ? Number(d[i]) : d[i]);
  }
  return out;
}

/** Why actual tensor t differs from spec (null when it matches). opts: terms, compare. */
function tensorMismatch(t, spec, what, opts) {
  if (!(t instanceof kd.Tensor)) return `${what}: expected a Tensor, got ${typeof t === 'object' ? JSON.stringify(t) : t}`;
  if (t.dtype !== spec.$t) return `${what}: dtype ${t.dtype}, expected ${spec.$t}`;
  if (JSON.stringify(t.shape) !== JSON.stringify(spec.shape)) return `${what}: shape [${t.shape}], expected [${spec.shape}]`;
  if (opts.compare === 'shape') return null;
  let actual = tensorValues(t);
  let expected = decodeValues(spec).values;
  if (opts.compare === 'abs') {
    actual = actual.map(Math.abs);
    expected = expected.map(Math.abs);
  }
  const tol = reductionTol(spec.$t, opts.terms);
  const bad = [];
  for (let i = 0; i < expected.length; i++) if (!closeEnough(actual[i], expected[i], spec.$t, tol)) bad.push(i);
  if (!bad.length) return null;
  const show = bad.slice(0, 3).map((i) => `[${i}] ${actual[i]} vs ${expected[i]}`).join('; ');
  return `${what}: ${bad.length}/${expected.length} values differ (${spec.$t}): ${show}`;
}

/** Compares a result with the recorded output (a tensor, list of them, or a plain value). */
function outputMismatch(r, e, what, opts) {
  if (e !== null && typeof e === 'object' && '$t' in e) return tensorMismatch(r, e, what, opts);
  if (Array.isArray(e)) {
    if (!Array.isArray(r)) return `${what}: expected ${e.length} outputs, got ${r instanceof kd.Tensor ? 'a Tensor' : typeof r}`;
    if (r.length !== e.length) return `${what}: ${r.length} outputs, expected ${e.length}`;
    const idx = Array.isArray(opts.compare) ? opts.compare : e.map((_, i) => i);
    for (const i of idx) {
      const m = outputMismatch(r[i], e[i], `${what}[${i}]`, { ...opts, compare: Array.isArray(opts.compare) ? 'values' : opts.compare });
      if (m) return m;
    }
    return null;
  }
  // a plain value (equal, allclose, a size)
  let a = r;
  if (a instanceof kd.Tensor && a.numel() === 1) a = a.item();
  const ev = e !== null && typeof e === 'object' && '$f' in e ? buildValue(e) : e;
  if (typeof ev === 'number' && typeof a === 'number' && closeEnough(a, ev, 'float64')) return null;
  if (a === ev) return null;
  return `${what}: got ${a}, expected ${ev}`;
}

const isKdError = (e) => e instanceof kd.KindlingError;

function describeError(e) {
  return isKdError(e) ? `${e.code}: ${e.message.split('\n')[0]}` : `${e && e.name}: ${e && e.message}`;
}

/**
 * Runs one sample on device: {forward: null | reason it fails, grad: undefined (none recorded) |
 * null | reason}. A sample PyTorch rejects passes when kindling rejects it with a kindling error
 * (or computes it where PyTorch 1.13 only lacked the dtype's kernel).
 */
function runSample(doc, s, device = 'cpu') {
  const res = { forward: null, grad: undefined };
  const leaves = [];
  const wantGrad = s.grads !== undefined;
  let args;
  let kwargs;
  try {
    args = buildValue(s.args, device, wantGrad ? leaves : null);
    kwargs = s.kwargs ? buildValue(s.kwargs, device, wantGrad ? leaves : null) : null;
  } catch (e) {
    // a sample PyTorch rejects may already be refused while its inputs are built (a 65-d tensor)
    if (!(s.error && isKdError(e))) res.forward = `building the inputs failed: ${describeError(e)}`;
    return res;
  }
  if (kwargs && kwargs.device === 'cpu' && device !== 'cpu') kwargs.device = device; // factories
  if (doc.cloneSelf && args[0] instanceof kd.Tensor) args[0] = args[0].clone();
  let r;
  try {
    r = callOp(doc, args, kwargs);
    if (doc.output !== undefined) r = r[doc.output]; // the OpInfo's op takes one output of the tuple
    // on a device, errors found while computing (an index out of range) come at the next sync
    // point (docs/CUDA.md): reach one inside the capture, as a user reading the result would
    if (device !== 'cpu') deviceSyncPoint(r);
  } catch (e) {
    if (s.error) {
      if (!isKdError(e)) res.forward = `PyTorch raises "${s.error.message}"; kindling threw a non-kindling ${describeError(e)}`;
      return res;
    }
    res.forward = `threw ${describeError(e)}`;
    if (wantGrad) res.grad = 'no forward';
    return res;
  }
  if (s.error) {
    if (!/not implemented for/.test(s.error.message)) res.forward = `PyTorch raises "${s.error.message}"; kindling returned a result`;
    return res;
  }
  let terms = 1;
  try {
    const out = flatSpecs(s.out)[0];
    if (out) terms = reductionLength({ op: doc.fn, kwargs: kwargs || undefined, expected: { shape: out.shape } }, args);
  } catch (e) {
    terms = 1;
  }
  const ints = s.dtype !== 'float32' && s.dtype !== 'float64';
  const compare = doc.random ? 'shape' : s.compare || (ints && doc.compareInts) || doc.compare || 'values';
  res.forward = outputMismatch(r, s.out, 'output', { terms, compare });
  if (wantGrad) res.grad = res.forward ? 'forward differs' : gradMismatch(doc, s, r, leaves, device, terms);
  return res;
}

/** Gradients for the recorded gradOutputs, against PyTorch's. */
function gradMismatch(doc, s, r, leaves, device, terms) {
  if (leaves.length !== s.grads.length) return `${leaves.length} inputs require grad, PyTorch has ${s.grads.length}`;
  return gradsMismatch(r, s.gradOutputs, leaves, s.grads, leaves.map((_, i) => `grad[${i}]`), device, terms, doc.compare === 'abs' ? 'abs' : 'values');
}

/**
 * Why the gradients of the tensors wrt (named by what) for the recorded gradOutputs of result r
 * differ from the expected specs (null where PyTorch has no gradient); null when they match.
 */
function gradsMismatch(r, gradOutputs, wrt, expected, what, device, terms, compare = 'values') {
  const outs = flatTensors(r);
  if (outs.length !== gradOutputs.length) return `${outs.length} output tensors, PyTorch has ${gradOutputs.length}`;
  const diffOuts = [];
  const gos = [];
  gradOutputs.forEach((g, i) => {
    if (g === null) return;
    diffOuts.push(outs[i]);
    gos.push(buildTensor(g, device, null));
  });
  let grads;
  try {
    if (diffOuts.some((o) => !o.requiresGrad)) return 'an output does not require grad';
    grads = kd.autograd.grad(diffOuts, wrt, gos, { allowUnused: true });
  } catch (e) {
    return `backward threw ${describeError(e)}`;
  }
  const outNumel = gos.reduce((n, t) => n + t.numel(), 0);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    let g = grads[i];
    if (e === null) {
      if (g !== null && tensorValues(g).some((v) => v !== 0)) return `${what[i]}: PyTorch has no gradient, kindling a nonzero one`;
      continue;
    }
    if (g === null) g = kd.zerosLike(wrt[i]);
    // a gradient adds up the output elements each input element reaches, times the forward's terms
    const fan = Math.max(1, Math.ceil(outNumel / Math.max(1, wrt[i].numel())));
    const m = tensorMismatch(g, e, what[i], { terms: Math.max(terms, fan), compare });
    if (m) return m;
  }
  return null;
}

// What a nondeterministic sample may do: differ in values (and so in the gradient after it).
const VALUES_DIFFER = /^(output\S*|grad\[\d+\]): \d+\/\d+ values differ |^forward differs$/;

/**
 * Whether the failure `failure` (a runSample message, null/undefined when it passed) of sample
 * `id` is excused by the known failures k of its OpInfo and device, for kind 'forward' or 'grad':
 * 'listed' (k[kind] lists it: it must fail), 'mayDiffer' (k.mayDiffer[kind] lists it: a
 * nondeterministic sample, e.g. which of duplicate writes wins, which may pass or differ in
 * values but fail no other way), or null (neither).
 */
function knownAs(k, kind, id) {
  if ((k[kind] || []).includes(id)) return 'listed';
  if (((k.mayDiffer || {})[kind] || []).includes(id)) return 'mayDiffer';
  return null;
}

/**
 * The problems of one sample's result r ({forward, grad}: failure messages, falsy when it
 * passed; grad undefined when no gradient was checked) against the known failures k: a failure
 * not listed, a listed one that passes now, a nondeterministic one that failed other than by
 * its values.
 */
function sampleProblems(k, id, r) {
  const problems = [];
  for (const [kind, failure, label] of [['forward', r.forward, id], ['grad', r.grad, `${id} gradient`]]) {
    const as = knownAs(k, kind, id);
    if (as === 'mayDiffer') {
      if (failure && !VALUES_DIFFER.test(failure)) problems.push(`${label}: ${failure} (a nondeterministic sample may only differ in values)`);
    } else if (failure && as !== 'listed') {
      problems.push(`${label}: ${failure}`);
    } else if (!failure && as === 'listed' && (kind === 'forward' || failure === null)) {
      problems.push(`${label}: listed as a known failure, but passes now`);
    }
  }
  return problems;
}

module.exports = {
  loadAll, loadKnownFailures, runSample, knownAs, sampleProblems, KNOWN_FAILURES, FIXTURES,
  // the pieces test/moduleinfo_helpers.js replays module samples with
  buildValue, buildTensor, outputMismatch, tensorMismatch, gradsMismatch, describeError, isKdError,
};
