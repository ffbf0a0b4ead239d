// helpers.js - shared test utilities: loading fixtures (written by tools/gen-fixtures.py from
// PyTorch), building kindling inputs from fixture specs (including non-contiguous views),
// calling ops the way a fixture case says, and comparing results with torch.testing.assert_close
// tolerances.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const kd = require('..');

// torch.testing.assert_close defaults: |actual - expected| <= atol + rtol * |expected|
const TOL = {
  float32: { rtol: 1.3e-6, atol: 1e-5 },
  float64: { rtol: 1e-7, atol: 1e-7 },
  float16: { rtol: 1e-3, atol: 1e-5 },
  bfloat16: { rtol: 1.6e-2, atol: 1e-5 },
};

// Note [Tolerance of reductions]
// A result that adds up `terms` rounded values (a dot product of length K in matmul/bmm/addmm/
// linear, (C_in / groups) * kernel size products in a convolution, the n elements of a sum, mean,
// var or norm, a cumsum's prefix) carries a rounding error that grows with the number of terms
// and depends on the order of the additions, which differs between kernels (BLAS or ours,
// blocking, AVX2 or AVX-512 lanes, threads), as PyTorch's tests of matmul-like ops allow for. The
// tolerance is the dtype's (one rounding of the result) plus the accumulation's: that of the dtype
// the kernels accumulate in (float64 for float64, float32 otherwise) times (sqrt(terms) - 1), the
// random-walk growth of n rounding errors. terms <= 1 is the plain TOL[dtype]; so are non-float
// dtypes. reductionLength(c, args) gives `terms` for a fixture case.
function reductionTol(dtype, terms = 1) {
  const base = TOL[dtype];
  if (!base || !(terms > 1)) return base;
  const acc = TOL[dtype === 'float64' ? 'float64' : 'float32'];
  const grow = Math.sqrt(terms) - 1;
  return { rtol: base.rtol + acc.rtol * grow, atol: base.atol + acc.atol * grow };
}

const numel = (shape) => shape.reduce((a, b) => a * b, 1);
const lastDim = (t) => (t.shape.length ? t.shape[t.shape.length - 1] : 1);

// einsum: the product of the sizes of the summed (contracted) letters.
function einsumTerms(equation, operands) {
  const eq = equation.replace(/\s/g, '');
  const [lhs, rhs] = eq.split('->');
  const terms = lhs.split(',');
  const size = new Map();
  terms.forEach((term, i) => {
    const shape = operands[i] ? operands[i].shape : [];
    const [before, after = null] = term.split('...');
    [...before].forEach((ch, d) => size.set(ch, shape[d]));
    if (after !== null) [...after].forEach((ch, d) => size.set(ch, shape[shape.length - after.length + d]));
  });
  const letters = terms.join('').replace(/\./g, '');
  const out = rhs !== undefined ? rhs : [...size.keys()].filter((ch) => letters.split(ch).length === 2).join('');
  let n = 1;
  for (const [ch, sz] of size) if (!out.includes(ch)) n *= sz;
  return n;
}

// Per op (the fixture op's function name): how many terms each output element adds up, from the
// built arguments, the kwargs and the expected output spec. Ops not listed: 1.
const REDUCTION_TERMS = {
  matmul: (a) => lastDim(a[0]),
  mm: (a) => lastDim(a[0]),
  bmm: (a) => lastDim(a[0]),
  dot: (a) => lastDim(a[0]),
  vdot: (a) => lastDim(a[0]),
  mv: (a) => lastDim(a[0]),
  linear: (a) => lastDim(a[0]),
  bilinear: (a) => lastDim(a[0]) * lastDim(a[1]),
  // projections of E features, then attention over S keys of N sequences (the in-projection's gradient sums them)
  multiHeadAttentionForward: (a) => lastDim(a[0]) * numel(a[1].shape.slice(0, -1)),
  addmm: (a) => lastDim(a[1]),
  baddbmm: (a) => lastDim(a[1]),
  addbmm: (a) => a[1].shape[0] * lastDim(a[1]),
  einsum: (a) => einsumTerms(a[0], Array.isArray(a[1]) ? a[1] : a.slice(1)),
  // the contracted size: sqrt(numel(a) * numel(b) / numel(out)) (out = the free dims of both)
  tensordot: (a, kw, out) => Math.round(Math.sqrt((numel(a[0].shape) * numel(a[1].shape)) / Math.max(1, numel(out.shape)))),
  // the columns; cov/corrcoef: the observations (a mean, then a product of centred rows)
  cdist: (a) => lastDim(a[0]),
  cov: (a) => 2 * lastDim(a[0]),
  corrcoef: (a) => 2 * lastDim(a[0]),
  // weight [C_out, C_in / groups, k...]: each output adds C_in / groups * k... products
  conv1d: (a) => numel(a[1].shape) / a[1].shape[0],
  conv2d: (a) => numel(a[1].shape) / a[1].shape[0],
  // weight [C_in, C_out / groups, k...]: at most C_in / groups * k... products per output
  convTranspose2d: (a, kw) => (a[1].shape[0] / ((kw && kw.groups) || a[6] || 1)) * numel(a[1].shape.slice(2)),
  avgPool2d: (a, kw) => { const k = (kw && kw.kernelSize) || a[1]; return Array.isArray(k) ? numel(k) : k * k; },
  adaptiveAvgPool2d: (a, kw, out) => Math.ceil(numel(a[0].shape) / Math.max(1, numel(out.shape))),
  // whole-tensor or along dims: the input elements per output element
  ...Object.fromEntries(['sum', 'nansum', 'mean', 'nanmean', 'prod', 'var', 'std', 'varMean', 'stdMean', 'norm', 'logsumexp']
    .map((op) => [op, (a, kw, out) => Math.ceil(numel(a[0].shape) / Math.max(1, numel(out.shape)))])),
  // a prefix along the dim
  ...Object.fromEntries(['cumsum', 'cumprod'].map((op) => [op, (a, kw) => {
    const dim = kw && kw.dim !== undefined ? kw.dim : a[1];
    const nd = a[0].shape.length;
    return nd ? a[0].shape[((dim % nd) + nd) % nd] : 1;
  }])),
};

/** How many terms each output element of a fixture case adds up (see Note [Tolerance of reductions]). */
function reductionLength(c, args) {
  const op = c.op.startsWith('nn.functional.') ? c.op.split('.')[2] : c.op.split('.')[0];
  const f = REDUCTION_TERMS[op];
  if (!f || c.error) return 1;
  const out = Array.isArray(c.expected) ? c.expected[0] : c.expected;
  return f(args, c.kwargs, out);
}
const FLOAT_DTYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const INT_DTYPES = new Set(['int8', 'uint8', 'int16', 'int32', 'int64']);
const ALL_DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'];

const fixtureCache = new Map();
/** The `cases` of test/fixtures/<name>.json. */
function fixture(name) {
  if (!fixtureCache.has(name)) {
    const file = path.join(__dirname, 'fixtures', `${name}.json`);
    fixtureCache.set(name, JSON.parse(fs.readFileSync(file, 'utf8')).cases);
  }
  return fixtureCache.get(name);
}

/** Fixture value -> JS number/boolean ('nan', 'inf', '-inf', '-0' are encoded as strings). */
function decode(v) {
  if (v === 'nan') return NaN;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  if (v === '-0') return -0;
  return v;
}

/** Deeply decodes a JSON value (arrays of encoded numbers). */
function decodeDeep(v) {
  if (Array.isArray(v)) return v.map(decodeDeep);
  return decode(v);
}

/** Flat values + shape -> nested arrays (shape [] -> the single value). */
function nest(flat, shape) {
  if (shape.length === 0) return flat[0];
  let pos = 0;
  const build = (d) => {
    const out = new Array(shape[d]);
    for (let i = 0; i < shape[d]; i++) out[i] = d === shape.length - 1 ? flat[pos++] : build(d + 1);
    return out;
  };
  return build(0);
}

const isTensorSpec = (a) => a !== null && typeof a === 'object' && !Array.isArray(a) && typeof a.dtype === 'string' && Array.isArray(a.shape);
const isScalarSpec = (a) => a !== null && typeof a === 'object' && !Array.isArray(a) && 'scalar' in a;

/** A contiguous kindling tensor holding a spec's data (no views applied). */
function buildContiguous(s) {
  const flat = s.data.map(decode);
  const numel = s.shape.reduce((a, b) => a * b, 1);
  if (numel === 0) return kd.zeros(s.shape, { dtype: s.dtype });
  return kd.tensor(nest(flat, s.shape), { dtype: s.dtype });
}

/** Applies one view description (see tools/gen-fixtures.py apply_view) with kindling ops. */
function applyView(t, v) {
  const [name, ...args] = v;
  switch (name) {
    case 'transpose': return t.transpose(args[0], args[1]);
    case 'permute': return t.permute(args[0]);
    case 'slice': return t.slice(args[0], args[1], args[2], args[3]);
    case 'narrow': return t.narrow(args[0], args[1], args[2]);
    case 'select': return t.select(args[0], args[1]);
    case 'expand': return t.expand(args[0]);
    case 'unsqueeze': return t.unsqueeze(args[0]);
    case 'squeeze': return args.length ? t.squeeze(args[0]) : t.squeeze();
    case 'view': return t.view(args[0]);
    case 'reshape': return t.reshape(args[0]);
    case 'flatten': return t.flatten(...args);
    case 't': return t.t();
    case 'asStrided': return t.asStrided(...args);
    case 'contiguous': return t.contiguous();
    case 'chunk': return t.chunk(...args);
    case 'split': return t.split(...args);
    case 'getitem': return t[args[0]];
    default: throw new Error(`test bug: unknown view ${name}`);
  }
}

/** {base, t}: the contiguous base and the input built from it by spec.views. */
function buildWithBase(s) {
  const base = buildContiguous(s);
  let t = base;
  for (const v of s.views || []) t = applyView(t, v);
  return { base, t };
}

/** A fixture argument -> what to pass to kindling (Tensor, number/boolean, or plain JSON value). */
function buildArg(a) {
  if (isScalarSpec(a)) return decode(a.scalar);
  if (isTensorSpec(a)) return buildWithBase(a).t;
  if (Array.isArray(a) && a.length && a.every(isTensorSpec)) return a.map((x) => buildWithBase(x).t);
  if (Array.isArray(a) && a.some(isTensorSpec) && a.every((x) => x === null || isTensorSpec(x))) {
    return a.map((x) => (x === null ? null : buildWithBase(x).t)); // Tensor?[] (index, indexPut)
  }
  return a;
}

/**
 * A non-contiguous tensor with the given values and shape: `how` is 'transpose' (the transpose
 * of a contiguous tensor of the transposed shape), 'slice' (every other element of a twice
 * as long last dim) or 'expand' (rows of a [1, n] tensor, values must repeat).
 */
function nonContiguous(values, shape, how = 'transpose', dtype = 'float32') {
  const c = kd.tensor(nest(values, shape), { dtype });
  let out;
  if (how === 'transpose') {
    assert.ok(shape.length >= 2, 'transpose needs 2 dims');
    out = c.transpose(-1, -2).contiguous().transpose(-1, -2);
  } else if (how === 'slice') {
    const last = shape.length - 1;
    const wide = kd.zeros([...shape.slice(0, last), shape[last] * 2], { dtype });
    wide.slice(last, 0, shape[last] * 2, 2).copy_(c);
    out = wide.slice(last, 0, shape[last] * 2, 2);
  } else {
    throw new Error(`test bug: unknown non-contiguous layout ${how}`);
  }
  assert.equal(out.isContiguous(), false, 'nonContiguous() did not give a non-contiguous tensor');
  return out;
}

/** Flat JS values of a tensor: numbers (int64 as numbers), booleans for bool. */
function values(t) {
  const d = t.dataSync();
  const dt = t.dtype;
  const out = new Array(d.length);
  for (let i = 0; i < d.length; i++) {
    if (dt === 'bool') out[i] = d[i] !== 0;
    else out[i] = typeof d[i] === 'bigint' ? Number(d[i]) : d[i];
  }
  return out;
}

/** a close to e for dtype: equal, or within tol (default TOL[dtype]) for float dtypes. */
function closeEnough(a, e, dtype, tol = TOL[dtype]) {
  if (dtype === 'bool') return a === e;
  if (typeof e === 'boolean') e = e ? 1 : 0;
  if (typeof a === 'boolean') a = a ? 1 : 0;
  if (Number.isNaN(e)) return Number.isNaN(a);
  if (!Number.isFinite(e)) return a === e;
  if (!FLOAT_DTYPES.has(dtype)) return a === e;
  const { rtol, atol } = tol;
  return Math.abs(a - e) <= atol + rtol * Math.abs(e);
}

/**
 * Asserts flat arrays are close for dtype; the message names the first few bad elements.
 * opts.terms: each element adds up that many terms (see Note [Tolerance of reductions]).
 */
function assertValuesClose(actual, expected, dtype, what = '', opts = {}) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} elements, expected ${expected.length}`);
  const tol = reductionTol(dtype, opts.terms);
  const bad = [];
  for (let i = 0; i < expected.length; i++) {
    if (!closeEnough(actual[i], expected[i], dtype, tol)) bad.push(i);
  }
  if (bad.length) {
    const show = bad.slice(0, 5).map((i) => `[${i}] got ${actual[i]} expected ${expected[i]}`).join('; ');
    const within = tol ? `, rtol ${tol.rtol.toExponential(2)} atol ${tol.atol.toExponential(2)}${opts.terms > 1 ? ` for ${opts.terms} terms` : ''}` : '';
    assert.fail(`${what}: ${bad.length}/${expected.length} elements differ (${dtype}${within}): ${show}`);
  }
}

/**
 * Asserts a kindling tensor matches a fixture output spec: dtype, shape and values.
 * opts.checkDtype: false skips the dtype; opts.terms as for assertValuesClose.
 */
function assertTensorClose(t, spec, what = 'result', opts = {}) {
  assert.ok(t instanceof kd.Tensor, `${what}: expected a Tensor, got ${t}`);
  if (opts.checkDtype !== false) assert.equal(t.dtype, spec.dtype, `${what}: dtype`);
  assert.deepEqual(t.shape, spec.shape, `${what}: shape`);
  assertValuesClose(values(t), spec.data.map(decode), spec.dtype, what, opts);
}

/** Asserts a plain JS array/number equals expected values within dtype tolerance. */
function assertArrayClose(actual, expected, dtype = 'float64', what = 'values') {
  const flatA = [].concat(...[actual].flat(Infinity));
  const flatE = [].concat(...[expected].flat(Infinity));
  assertValuesClose(flatA, flatE, dtype, what);
}

// The kindling function for a fixture's op path: 'logSoftmax' -> kd.logSoftmax,
// 'nn.functional.conv2d' -> kd.nn.functional.conv2d, 'max.dim' -> kd.max (the first function on
// the path; later segments name PyTorch overloads).
function opFunction(path) {
  let o = kd;
  for (const seg of path.split('.')) {
    o = o[seg];
    if (typeof o === 'function') return o;
    assert.ok(o !== undefined, `kindling has no ${path}`);
  }
  return o;
}

/**
 * Calls the op of a fixture case with already built arguments; its keyword arguments are built by
 * buildKwarg (on the CPU by default; the CUDA parity suite builds tensors there on the GPU).
 */
function callOp(c, args, buildKwarg = buildArg) {
  const op = c.op.split('.')[0];
  const kw = [];
  if (c.kwargs) {
    const o = {};
    for (const [k, v] of Object.entries(c.kwargs)) o[k] = buildKwarg(v);
    kw.push(o);
  }
  if (c.form === 'inplace') return args[0][`${op}_`](...args.slice(1), ...kw);
  if (c.form === 'method') return args[0][op](...args.slice(1), ...kw);
  return opFunction(c.op)(...args, ...kw);
}

// Which kindling codes fit a PyTorch error (type + message). PyTorch raises RuntimeError for
// most things; kindling's codes are finer, so several can be acceptable.
const CODE_RULES = [
  [/not implemented for|not supported|Boolean inputs not supported/, ['KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE']],
  [/can't be cast|expected scalar type|Found dtype|could not infer output dtype|expected condition to be a boolean|argument alpha must not be a floating point|only supports floating-point dtypes/,
    ['KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']],
  [/isn't allowed in a leading, non-existing dimension/, ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']],
  [/Negative integer powers|negative integer powers/, ['KD_INVALID_ARGUMENT', 'KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH']],
  [/Dimension out of range|out of range for tensor of size|index .* out of range/, ['KD_INDEX_OUT_OF_RANGE']],
  [/out of bounds for dimension|index out of range in self|out of range: tried to access|selected index k out of range/, ['KD_INDEX_OUT_OF_RANGE']],
  [/Expected dtype|xpected a long tensor|same scalar type|dtypes match|expected BoolTensor|Expected self.dtype|only applicable to index tensor|expected to have the same dtype/,
    ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/must match the size|shapes cannot be multiplied|doesn't match the broadcast shape|is invalid for input of size|expanded size|size mismatch|inconsistent tensor size|Expected size for first two dimensions/,
    ['KD_SHAPE_MISMATCH']],
  [/view size is not compatible|must be a matrix|must be a 3D tensor|need to be at least 1D|expects a tensor with <= 2 dimensions|number of dimensions in the tensor input does not match/,
    ['KD_SHAPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/exceeds dimension size|out of bounds for storage/, ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']],
  [/Expected reduction dim to be specified/, ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH', 'KD_INDEX_OUT_OF_RANGE']],
  [/must have the same dtype|expected both vectors to have same dtype/, ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/must be a tensor of long dtype|must be either float or double dtype|q tensor must be same dtype/, ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/selected number k out of range/, ['KD_INDEX_OUT_OF_RANGE']],
  [/to have the same dtype|should be Long but got|to have dtype of long|only supports floating-point dtypes|to have (integral|floating point) dtype/,
    ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/Expected a floating point or complex tensor|Expected (A and B|input and other) to have the same dtype|doesn't handle types other than|expected a tensor with 2 or more dimensions of float/,
    ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']],
  [/.*/, ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']],
];

function codesForTorchError(e) {
  if (/Expected reduction dim/.test(e.message)) return ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH', 'KD_INDEX_OUT_OF_RANGE'];
  if (e.type === 'IndexError') return ['KD_INDEX_OUT_OF_RANGE'];
  if (/LinAlgError/.test(e.type)) return ['KD_LINALG_ERROR'];
  for (const [re, codes] of CODE_RULES) if (re.test(e.message)) return codes;
  return ['KD_INVALID_ARGUMENT'];
}

/** True for errors torch 1.13 raises only because it lacks a kernel for a dtype. */
function isTorchUnimplemented(e) {
  return /not implemented for/.test(e.message);
}

const ALL_CODES = new Set(['KD_INVALID_ARGUMENT', 'KD_INVALID_TYPE', 'KD_SHAPE_MISMATCH', 'KD_DTYPE_MISMATCH',
  'KD_DEVICE_MISMATCH', 'KD_INDEX_OUT_OF_RANGE', 'KD_OUT_OF_MEMORY', 'KD_DISPOSED', 'KD_NOT_SUPPORTED',
  'KD_CUDA_UNAVAILABLE', 'KD_CUDA_ERROR', 'KD_CUDA_OOM', 'KD_LINALG_ERROR', 'KD_IO_ERROR']);

/** Asserts that err is a kindling error: an Error with a known code of the right class. */
function assertKdError(err, codes, what = '') {
  assert.ok(err instanceof Error, `${what}: expected an Error, got ${err}`);
  assert.ok(err instanceof kd.KindlingError, `${what}: expected a kindling error, got ${err && err.name} (${err && err.message})`);
  assert.equal(typeof err.code, 'string', `${what}: error has no .code (${err && err.message})`);
  assert.ok(ALL_CODES.has(err.code), `${what}: unknown code ${err.code} (${err.message})`);
  if (codes) {
    const list = Array.isArray(codes) ? codes : [codes];
    assert.ok(list.includes(err.code), `${what}: code ${err.code}, expected ${list.join(' or ')} (message: ${err.message})`);
  }
  if (err.code === 'KD_INDEX_OUT_OF_RANGE') assert.ok(err instanceof RangeError, `${what}: KD_INDEX_OUT_OF_RANGE must be a RangeError`);
  if (err.code === 'KD_INVALID_TYPE') assert.ok(err instanceof TypeError, `${what}: KD_INVALID_TYPE must be a TypeError`);
  assert.ok(typeof err.message === 'string' && err.message.length > 0, `${what}: empty message`);
  return err;
}

/** Runs fn, asserts it throws a kindling error with one of codes; returns the error. */
function expectKdError(fn, codes, what = '') {
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err !== null, `${what}: expected an error${codes ? ` (${[].concat(codes).join('/')})` : ''}, but nothing was thrown`);
  return assertKdError(err, codes, what);
}

/** The numbers appearing in a message, as strings, in order. */
function numbersIn(msg) {
  return (msg.match(/-?\d+/g) || []);
}

/**
 * Loose check that a kindling message follows PyTorch's: every number PyTorch mentions
 * (sizes, dims, indices) is mentioned by kindling too.
 */
function assertMessageLike(kdMsg, torchMsg, what = '') {
  const missing = numbersIn(torchMsg).filter((n) => !numbersIn(kdMsg).includes(n));
  assert.equal(missing.length, 0,
    `${what}: message "${kdMsg}" lacks the numbers ${missing.join(', ')} of PyTorch's "${torchMsg}"`);
}

/** Shape of a nested JS array. */
function shapeOf(a) {
  const s = [];
  for (let x = a; Array.isArray(x); x = x[0]) { s.push(x.length); if (x.length === 0) break; }
  return s;
}

/** The Fashion-MNIST folder when the data set is installed (the examples' smoke runs), else null. */
function fashionMnistDir() {
  const dir = process.env.FASHION_MNIST_DIR || '/usr/share/datasets/fashion-mnist';
  const has = (f) => fs.existsSync(path.join(dir, f)) || fs.existsSync(path.join(dir, `${f}.gz`));
  return has('train-images-idx3-ubyte') ? dir : null;
}

/** The CPU's feature flags as Linux reports them (/proc/cpuinfo: cpuid as the kernel lets
 * programs use it); empty on other systems and architectures. */
function cpuFlags() {
  if (process.arch !== 'x64' || process.platform !== 'linux') return new Set();
  const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'));
  return new Set(line ? line.split(':')[1].trim().split(/\s+/) : []);
}

/** Runs tools/fuzz.js with args (a short seeded run) and fails with the replay command on a
 * finding; returns the summary line. */
function runFuzzer(args) {
  const root = require('node:path').join(__dirname, '..');
  const r = require('node:child_process').spawnSync(process.execPath, [require('node:path').join(root, 'tools', 'fuzz.js'), ...args],
    { cwd: root, encoding: 'utf8', timeout: 600000 });
  assert.equal(r.status, 0, `npm run fuzz -- ${args.join(' ')} found something:\n${r.stdout}\n${r.stderr}`);
  const summary = r.stdout.trim().split('\n').pop();
  const cases = Number((/(\d+) cases/.exec(summary) || [])[1]);
  assert.ok(cases > 0, `no case ran: ${summary}`);
  return summary;
}

module.exports = {
  runFuzzer,
  fashionMnistDir, cpuFlags,
  kd, assert, TOL, reductionTol, reductionLength, FLOAT_DTYPES, INT_DTYPES, ALL_DTYPES, fixture, decode, decodeDeep, nest, isTensorSpec, isScalarSpec,
  buildContiguous, buildWithBase, buildArg, applyView, nonContiguous, values, closeEnough, assertValuesClose,
  assertTensorClose, assertArrayClose, callOp, codesForTorchError, isTorchUnimplemented, assertKdError,
  expectKdError, assertMessageLike, numbersIn, shapeOf, ALL_CODES,
};

/**
 * Runs one op fixture case (pointwise.json, reductions.json, matmul.json): builds the inputs,
 * calls the op in the case's form, and checks the result (or the error) against PyTorch's.
 */
// Tuples are [values, indices] but for varMean/stdMean: [var, mean] named .var/.mean (.std/.mean).
const TUPLE_NAMES = { varMean: ['var', 'mean'], stdMean: ['std', 'mean'] };
function runOpCase(c) {
  const built = c.args.map((a, i) => (i === 0 && c.form === 'inplace' ? buildWithBase(a) : { t: buildArg(a) }));
  const args = built.map((b) => b.t);
  if (c.error) {
    let result;
    let err = null;
    try {
      result = callOp(c, args);
    } catch (e) {
      err = e;
    }
    if (isTorchUnimplemented(c.error)) {
      // torch 1.13 lacks this kernel; kindling may compute it or refuse it cleanly.
      if (err !== null) assertKdError(err, null, c.name);
      else assert.ok(result instanceof kd.Tensor || Array.isArray(result), `${c.name}: neither a result nor an error`);
      return;
    }
    assert.ok(err !== null, `${c.name}: PyTorch raises "${c.error.message}", kindling returned a result`);
    assertKdError(err, codesForTorchError(c.error), c.name);
    assertMessageLike(err.message, c.error.message, c.name);
    if (c.form === 'inplace') {
      // a failed in-place op leaves self untouched
      assertValuesClose(values(built[0].base), c.args[0].data.map(decode), c.args[0].dtype, `${c.name}: self after the error`);
    }
    return;
  }
  const terms = reductionLength(c, args); // before the call: an in-place op may change args[0]
  const r = callOp(c, args);
  if (c.tuple) {
    const names = TUPLE_NAMES[c.op] || ['values', 'indices'];
    assert.ok(Array.isArray(r), `${c.name}: expected [${names}], got ${r}`);
    assert.equal(r.length, c.expected.length, `${c.name}: tuple length`);
    // (values, indices), or the op's names (varMean: var, mean), or the names the case gives (aminmax: min, max; frexp: mantissa, exponent;
    // linalg's PyTorch field names, camelCased)
    (TUPLE_NAMES[c.op] || c.names || c.tupleNames || (r.indices !== undefined ? ['values', 'indices'] : []))
      .map((n) => n.replace(/_([a-z])/g, (_, x) => x.toUpperCase()))
      .forEach((n, i) => assert.equal(r[n], r[i], `${c.name}: .${n}`));
    c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`, { terms }));
    return;
  }
  if (c.form === 'inplace') {
    assert.equal(r, args[0], `${c.name}: an in-place op returns self`);
    assertTensorClose(args[0], c.expected, `${c.name}: self`, { terms });
    assertTensorClose(built[0].base, c.expectedBase, `${c.name}: base of self`, { terms });
    return;
  }
  assertTensorClose(r, c.expected, c.name, { terms });
}

module.exports.runOpCase = runOpCase;

/**
 * The parity suite of one fixture family (test/fixtures/<family>.json): a describe per op, an it
 * per case, each checked by runOpCase against PyTorch's result or error.
 */
function parityTests(family, title = `${family} (PyTorch fixtures)`) {
  describe(title, function () {
    const groups = new Map();
    for (const c of fixture(family)) {
      if (!groups.has(c.op)) groups.set(c.op, []);
      groups.get(c.op).push(c);
    }
    for (const [op, list] of groups) {
      describe(op, function () {
        for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runOpCase(c); });
      });
    }
  });
}
module.exports.parityTests = parityTests;

/** n deterministic values in [lo, hi) (an LCG from seed), as a Float64Array: big test inputs. */
function uniformValues(n, lo, hi, seed = 7) {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    out[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return out;
}
module.exports.uniformValues = uniformValues;

/** A sync point after a device call: its result's values are read (and one element of a new
 * tensor when it has no non-empty tensor), so an error found on the device (an index out of range,
 * reported at the next sync point: Note [Deferred index errors] in cuda/deferred_check.cuh) is
 * raised here, inside the caller's error capture. */
function deviceSyncPoint(r) {
  const tensors = [r].flat(2).filter((t) => t instanceof kd.Tensor && t.numel() > 0);
  for (const t of tensors) t.dataSync();
  if (!tensors.length) kd.tidy(() => kd.zeros([1], { device: 'cuda' }).item());
}
module.exports.deviceSyncPoint = deviceSyncPoint;

/**
 * Runs a full garbage collection in this process (node's gc(), without --expose-gc on the
 * command line), then kd.memory(), which frees the tensors of the handles it collected: a test
 * that counts kd.memory().liveTensors starts from there, so tensors earlier tests left to the GC
 * are not freed in the middle of its count.
 */
let v8Gc = null;
function collectGarbage() {
  if (!v8Gc) {
    require('node:v8').setFlagsFromString('--expose-gc');
    v8Gc = require('node:vm').runInNewContext('gc');
  }
  v8Gc();
  return kd.memory();
}
module.exports.collectGarbage = collectGarbage;
