// fuzz/api.js - the API target of tools/fuzz.js: programs of calls over every op of the op list
// (the schemas lib/ops.gen.js installs: name, argument types, keyword-only options) with hostile
// arguments, and the interpreter that runs one program in a child process (tools/fuzz/child.js).
//
// A program is plain data (it crosses to the child over IPC and is printed on failure):
//   { tensors: [spec...], calls: [call...] }
// The specs build the pool of tensors the calls draw from: fresh tensors of every dtype (0-d,
// empty, small shapes), views of earlier ones (expand: stride 0; asStrided: overlapping elements;
// transposed, narrowed, flipped, diagonal), disposed tensors, and forged ones (an object with
// Tensor.prototype whose handle is not a tensor's: structured clone refuses tensors, so this is
// what a tensor sent from another worker could at most become). A call names an op form
// ('function:sum', 'method:add_'), an overload, and its arguments: tensor references into the
// pool (whose tensor results join it, so in-place ops run on views of themselves), and literals
// drawn for the argument's type or, one time in fifteen, hostile values of any type (NaN, negative,
// fractional and huge dims, element counts past int64, strings, BigInts, null, objects).
//
// The promise checked: every call returns or throws a KindlingError whose code is a KD_* code
// other than KD_INTERNAL; nothing crashes (the pool sees the child die), hangs (a timeout), or
// leaves tensors alive once the program's kd.tidy scope ends.
'use strict';
const fc = require('fast-check');
const { badException, tidyFinding, noteReturn, noteThrow } = require('./promise');
const path = require('node:path');

const DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'];

/** [{key: 'function:sum', form: 'function', name: 'sum', overloads: [[{name, type, kwonly, optional}]]}] */
function opForms() {
  // lib/ops.gen.js's install() returns the schemas it binds arguments with; installing it on
  // stand-ins reads them without loading the addon.
  const install = require(path.join(__dirname, '..', '..', 'lib', 'ops.gen.js'));
  const G = install(function Stand() {}, {}, {}, { namespace: () => ({}), invoke() {} });
  return Object.entries(G).map(([key, overloads]) => ({
    key,
    form: key.split(':')[0],
    name: key.split(':')[1],
    overloads: overloads.map((o) => o.args.map(([name, type, kwonly, optional]) => ({ name, type, kwonly, optional }))),
  }));
}

// ---- arbitraries ---------------------------------------------------------------------------

const smallDim = fc.integer({ min: 0, max: 4 });
// Sizes no machine holds (so that a missing check fails to allocate instead of filling the
// machine: 2^31 alone is a real, if large, tensor), element counts past int64
// once multiplied, and values that are not sizes at all.
const hostileNumber = fc.constantFrom(-1, -2, -7, NaN, Infinity, -Infinity, 1.5, -0, 2 ** 40, 2 ** 53, 2 ** 53 - 1,
  2 ** 62, 2 ** 63, 2 ** 64, -(2 ** 63), 1e300, Number.MIN_VALUE);
const hostileAny = fc.oneof(
  hostileNumber,
  fc.constantFrom(null, undefined, true, '', '3', 'float32', 'cpu', 'cuda', 'cuda:7', 'mean', 'nonsense', 3n, -(2n ** 70n), 2n ** 63n),
  fc.constantFrom([], [[]], [1, [2]], {}, { dtype: 'int8' }, { length: 2 ** 40 }),
  fc.array(hostileNumber, { maxLength: 4 }),
);
const intArb = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -4, max: 4 }) }, { weight: 1, arbitrary: hostileNumber });
const shapeArb = fc.oneof(
  { weight: 6, arbitrary: fc.array(smallDim, { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(smallDim, fc.constant(-1), hostileNumber), { minLength: 1, maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom([2 ** 32, 2 ** 32, 0], [2 ** 31, 2 ** 31, 2 ** 31, 2], [2 ** 62, 4], [0, 2 ** 62, 2 ** 62], [3, -1, -1]) },
);
// Multiples of 1/8 for the ordinary values: a tiny one (1e-9) is a legitimate arange step that
// asks for a real tensor of 10^9 elements, which only fills the machine (as 2^31 sizes would).
const floatArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -64, max: 64 }).map((k) => k / 8) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0, 1e308, 5e-324, 2 ** 63, 1e15) },
);
const scalarArb = fc.oneof({ weight: 4, arbitrary: floatArb }, { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constantFrom(3n, 2n ** 63n, -(2n ** 64n)) }, { weight: 2, arbitrary: intArb });
const dtypeArb = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...DTYPES) }, { weight: 1, arbitrary: fc.constantFrom('float128', 'F32', 7, null) });
const deviceArb = fc.constantFrom('cpu', 'cpu', 'cuda', 'cuda:0', 'cuda:99', 'meta', 'cpu:1', '', 0);
const strArb = fc.constantFrom('mean', 'sum', 'none', 'floor', 'trunc', 'constant', 'reflect', 'replicate', 'circular',
  'nearest', 'bilinear', 'linear', 'same', 'valid', 'tanh', 'fro', 'nuc', 'reduced', 'complete', 'ij', 'xy',
  'ii->i', 'ij,jk->ik', '...i,i->...', 'bad', '', 'i->', 'linear', 'zeros', 'border');
const tensorRef = fc.nat({ max: 63 }).map((t) => ({ t }));
const tensorListArb = fc.array(tensorRef, { maxLength: 4 }).map((ts) => ({ ts }));
const lit = (arb) => arb.map((v) => ({ v }));

const BY_TYPE = {
  'Tensor': tensorRef,
  'Tensor?': fc.oneof({ weight: 4, arbitrary: tensorRef }, { weight: 1, arbitrary: lit(fc.constant(null)) }),
  'Tensor|Scalar': fc.oneof(tensorRef, lit(scalarArb)),
  'Scalar': lit(scalarArb),
  'Scalar?': lit(fc.option(scalarArb)),
  'int': lit(intArb),
  'int?': lit(fc.option(intArb)),
  'int[]': lit(shapeArb),
  'int[]?': lit(fc.option(shapeArb)),
  'int|int[]': lit(fc.oneof(intArb, shapeArb)),
  'float': lit(floatArb),
  'float?': lit(fc.option(floatArb)),
  'float[]?': lit(fc.option(fc.array(floatArb, { maxLength: 4 }))),
  'bool': lit(fc.boolean()),
  'bool?': lit(fc.option(fc.boolean())),
  'dtype?': lit(fc.option(dtypeArb)),
  'device?': lit(fc.option(deviceArb)),
  'str': lit(strArb),
  'str?': lit(fc.option(strArb)),
  'Tensor[]': tensorListArb,
  'Tensor?[]': fc.array(fc.oneof(tensorRef, lit(fc.constant(null))), { maxLength: 4 }).map((ts) => ({ ts })),
};

function argArb(type) {
  // int[N] (PyTorch's IntArrayRef[N]: one int or a list) as int|int[]
  const fixed = /^int\[\d+\](\?)?$/.exec(type);
  const typed = fixed ? (fixed[1] ? lit(fc.option(fc.oneof(intArb, shapeArb))) : BY_TYPE['int|int[]']) : BY_TYPE[type];
  if (!typed) throw new Error(`fuzz: no arbitrary for argument type '${type}'`);
  return fc.oneof({ weight: 14, arbitrary: typed }, { weight: 1, arbitrary: lit(hostileAny) });
}

// One call of an op form: positional arguments (optional trailing ones sometimes left out, one
// time in ten one extra), keyword-only ones in an options object.
function callArb(op) {
  return fc.nat({ max: op.overloads.length - 1 }).chain((which) => {
    const schema = op.overloads[which].filter((a) => !(op.form !== 'function' && a.name === 'self' && a.type === 'Tensor'));
    const self = op.form === 'function' ? fc.constant(null) : tensorRef;
    const positional = schema.filter((a) => !a.kwonly);
    const keywords = schema.filter((a) => a.kwonly);
    const required = positional.filter((a) => !a.optional).length;
    return fc.record({
      self,
      args: fc.tuple(...positional.map((a) => argArb(a.type))),
      count: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: required, max: positional.length }) }, { weight: 1, arbitrary: fc.constant(positional.length + 1) }),
      extra: lit(hostileAny),
      opts: keywords.length ? fc.option(fc.record(Object.fromEntries(keywords.map((a) => [a.name, argArb(a.type)])), { requiredKeys: [] }))
        : fc.constant(null),
    }).map(({ self: s, args, count, extra, opts }) => {
      const list = args.slice(0, count);
      if (count > args.length) list.push(extra);
      return { key: op.key, overload: which, self: s, args: list, opts };
    });
  });
}

// Reading results back exercises the printers and the copies to JS.
const READS = ['dataSync', 'arraySync', 'toString', 'item', 'numel', 'contiguous', 'clone', 'backward'];
const readArb = fc.record({ read: fc.constantFrom(...READS), self: tensorRef });

const tensorSpecArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ make: fc.constantFrom(...DTYPES), shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 }), grad: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ make: fc.constantFrom(...DTYPES), shape: fc.constant([]), grad: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ of: fc.nat({ max: 63 }), view: fc.constantFrom('expand', 't', 'narrow', 'flip', 'diagonal', 'unsqueeze', 'select', 'permute') }) },
  { weight: 2, arbitrary: fc.record({ of: fc.nat({ max: 63 }), asStrided: fc.record({ size: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }), stride: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }), offset: fc.nat({ max: 3 }) }) }) },
  { weight: 1, arbitrary: fc.record({ disposed: fc.nat({ max: 63 }) }) },
  { weight: 1, arbitrary: fc.record({ forged: fc.constantFrom('plain', 'number', 'otherHandle', 'nullHandle', 'proxy') }) },
);

function programArb(ops, { maxCalls = 12 } = {}) {
  const opArb = fc.constantFrom(...ops).chain(callArb);
  return fc.record({
    tensors: fc.array(tensorSpecArb, { minLength: 1, maxLength: 8 }),
    calls: fc.array(fc.oneof({ weight: 5, arbitrary: opArb }, { weight: 1, arbitrary: readArb }), { minLength: 1, maxLength: maxCalls }),
  });
}

// ---- the interpreter (runs in the child) -----------------------------------------------------

/** The function for an op form: kd.<name> in whichever namespace holds it, or the method. */
function resolve(kd, key) {
  const [form, name] = key.split(':');
  if (form === 'method') return { method: name };
  // a dotted key names its namespace: 'linalg.vectorNorm'
  const dot = name.lastIndexOf('.');
  if (dot > 0) {
    const ns = name.slice(0, dot).split('.').reduce((o, k) => (o ? o[k] : undefined), kd);
    const fn = ns && ns[name.slice(dot + 1)];
    if (typeof fn === 'function') return { fn };
  }
  for (const ns of [kd, kd.nn && kd.nn.functional, kd._internal, kd.linalg, kd.special, kd.fft]) {
    if (ns && typeof ns[name] === 'function') return { fn: ns[name] };
  }
  return null;
}

function makeTensor(kd, spec, pool) {
  const pick = (i) => pool[i % pool.length];
  if (spec.make) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const base = kd.arange(n, { dtype: 'float64' }).sub(n / 2).mul(0.75).reshape(spec.shape);
    const t = base.to(spec.make);
    if (t !== base) base.dispose();
    if (spec.grad && (spec.make === 'float32' || spec.make === 'float64')) t.requiresGrad_(true);
    return t;
  }
  if (!pool.length) return kd.ones([2]);
  if (spec.view) {
    const b = pick(spec.of);
    switch (spec.view) {
      case 'expand': return b.unsqueeze(0).expand([3, ...b.shape]);
      case 't': return b.dim() <= 2 ? b.t() : b.transpose(0, -1);
      case 'narrow': return b.dim() ? b.narrow(-1, b.shape[b.dim() - 1] > 1 ? 1 : 0, b.shape[b.dim() - 1] > 1 ? 1 : b.shape[b.dim() - 1]) : b.view([1]);
      case 'flip': return b.flip([0]);
      case 'diagonal': return b.dim() >= 2 ? b.diagonal() : b.unsqueeze(0);
      case 'unsqueeze': return b.unsqueeze(-1);
      case 'select': return b.dim() && b.shape[0] ? b.select(0, 0) : b.view([-1]);
      case 'permute': return b.permute([...b.shape.keys()].reverse());
      default: throw new Error(spec.view);
    }
  }
  if (spec.asStrided) {
    const b = pick(spec.of);
    const { size, stride, offset } = spec.asStrided;
    return b.asStrided(size, stride.slice(0, size.length).concat(size.slice(stride.length).map(() => 1)), offset);
  }
  if (spec.disposed !== undefined) {
    const t = pick(spec.disposed).clone();
    t.dispose();
    return t;
  }
  if (spec.forged) {
    const f = Object.create(kd.Tensor.prototype);
    const real = pool.find((t) => t._h && typeof t._h === 'object');
    // otherHandle: an object made from a real handle's prototype, not by the addon
    const handles = { plain: {}, number: 42, otherHandle: real ? Object.create(Object.getPrototypeOf(real._h)) : {}, nullHandle: null, proxy: new Proxy({}, {}) };
    f._h = handles[spec.forged];
    return f;
  }
  throw new Error(`fuzz: unknown tensor spec ${JSON.stringify(spec)}`);
}

function collect(pool, r) {
  if (r instanceof Object && r.constructor && r.constructor.name === 'Tensor') pool.push(r);
  else if (Array.isArray(r)) for (const x of r) collect(pool, x);
  else if (r && typeof r === 'object' && !ArrayBuffer.isView(r)) for (const k of Object.keys(r).slice(0, 8)) collect(pool, r[k]);
}

/** Runs one program; resolves to null (the promise kept) or a finding {kind, step, ...}. */
async function runProgram(kd, program) {
  const value = (pool, a) => {
    if (a.t !== undefined) return pool[a.t % pool.length];
    if (a.ts !== undefined) return a.ts.map((x) => (x === null || x.v !== undefined ? (x && x.v) : pool[x.t % pool.length]));
    return a.v;
  };
  const body = async () => {
    const pool = [];
    for (const [i, spec] of program.tensors.entries()) {
      try {
        const t = makeTensor(kd, spec, pool);
        if (!(t instanceof kd.Tensor)) throw new Error(`fuzz: tensor spec ${JSON.stringify(spec)} made ${t}`);
        pool.push(t);
      } catch (e) {
        const bad = badException(kd, e);
        if (bad) return { kind: 'exception', step: `tensors[${i}]`, spec, ...bad };
      }
    }
    if (!pool.length) pool.push(kd.ones([2]));
    for (const [i, call] of program.calls.entries()) {
      try {
        let r;
        if (call.read) {
          const t = value(pool, call.self);
          r = call.read === 'numel' ? t.numel() : call.read === 'backward' ? t.sum().backward() : t[call.read]();
        } else {
          const target = resolve(kd, call.key);
          if (!target) return { kind: 'missing', step: `calls[${i}]`, message: `no function for ${call.key}` };
          const args = call.args.map((a) => value(pool, a));
          if (call.opts) args.push(Object.fromEntries(Object.entries(call.opts).map(([k, a]) => [k, value(pool, a)])));
          if (target.method) {
            const self = value(pool, call.self);
            if (typeof self[target.method] !== 'function') return { kind: 'missing', step: `calls[${i}]`, message: `no method ${target.method}` };
            r = self[target.method](...args);
          } else {
            r = target.fn(...args);
          }
        }
        if (r && typeof r.then === 'function') r = await r;
        noteReturn();
        collect(pool, r);
      } catch (e) {
        noteThrow(e);
        const bad = badException(kd, e);
        if (bad) return { kind: 'exception', step: `calls[${i}]`, call: program.calls[i], ...bad };
      }
    }
    return null;
  };
  return tidyFinding(kd, body, 'program');
}

module.exports = { opForms, programArb, runCase: runProgram, DTYPES, makeTensor, tensorSpecArb, hostileAny, BY_TYPE };
