// fuzz/library.js - the library target of tools/fuzz.js: ops defined at run time (kd.library)
// with generated schemas, implementations and autograd formulas, called with hostile arguments.
// A case is plain data: one op and the calls made of it.
//   op     the schema's arguments after `Tensor x` (int[] among them, Tensor[], scalars, strings),
//          its returns, what the implementation returns (a new tensor, an input as is, an element
//          of a Tensor[] input), what setupContext keeps (inputs, the output, ctx properties,
//          arrays of them) and what the backward returns (gradients, or wrong things)
//   calls  arguments per schema type or hostile values, among them array-likes whose length does
//          not fit an int (2^31, 2^32 - 1), a `map` returning the array itself, and getters that
//          dispose a tensor argument or throw while the native entry reads the list; each call
//          then runs backward (once, twice, with retainGraph or createGraph) or not, and its
//          result is disposed or left to the case's kd.tidy scope.
// The promise checked: every call returns or throws a KindlingError with a KD_* code (not
// KD_INTERNAL) or the error a getter threw; nothing crashes or hangs; and once the case's kd.tidy
// scope ends no tensor is alive (so what an op's node saved went with its graph, without waiting
// for the garbage collector or a turn of the event loop).
'use strict';
const fc = require('fast-check');
const { badException, tidyFinding, noteReturn, noteThrow } = require('./promise');
const { makeTensor, tensorSpecArb, hostileAny, BY_TYPE } = require('./api');

const TYPES = ['Tensor', 'Tensor?', 'Tensor[]', 'int', 'int?', 'int[]', 'int[]?', 'int[2]', 'float', 'float[]', 'bool', 'Scalar', 'str', 'ScalarType?'];

const lit = (arb) => arb.map((v) => ({ v }));
// Lengths a uint32 can hold but an int cannot (or a buffer should not): the native entry must
// refuse them before reading an element; 600 and 65 pass the 64 inline ints.
const arrayLikeArb = fc.record({
  like: fc.constantFrom(2 ** 31, 2 ** 32 - 1, 2 ** 24 + 1, 600, 65, 64, 0),
  fill: fc.constantFrom(0, 0x4141414141, -1, 1.5, 'x', 2n ** 62n),
  mapSelf: fc.boolean(),
  getter: fc.constantFrom(null, null, 'dispose', 'throw'),
}).map((like) => ({ like }));
// The arguments of the op list's types (fuzz/api.js) under their schema spelling; lists are also
// hostile array-likes, and strings also those the native entry refuses (too long, a NUL).
const AS_OP_LIST = { 'float[]': 'float[]?', 'int[2]': 'int|int[]', 'ScalarType?': 'dtype?' };
const LISTS = new Set(['Tensor[]', 'int[]', 'int[]?', 'int[2]', 'float[]']);
function typedArb(type) {
  if (type === 'str') return lit(fc.constantFrom('mean', '', 'x'.repeat(63), 'x'.repeat(64), 'a\0b'));
  const arb = BY_TYPE[AS_OP_LIST[type] || type];
  return LISTS.has(type) ? fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: arrayLikeArb }) : arb;
}
const argArb = (type) => fc.oneof({ weight: 12, arbitrary: typedArb(type) }, { weight: 1, arbitrary: lit(hostileAny) });

const opArb = fc.record({
  args: fc.array(fc.constantFrom(...TYPES), { maxLength: 5 }),
  returns: fc.constantFrom('Tensor', 'Tensor', '(Tensor, Tensor)', 'Tensor[]'),
  impl: fc.constantFrom('new', 'new', 'input', 'listElement', 'view'),
  autograd: fc.boolean(),
  save: fc.subarray(['inputs', 'output', 'props', 'list', 'number']),
  backward: fc.constantFrom('ok', 'ok', 'ok', 'single', 'number', 'short', 'listAsTensor', 'throws'),
});

function callArb(op) {
  return fc.record({
    args: fc.tuple(BY_TYPE.Tensor, ...op.args.map(argArb)),
    backward: fc.constantFrom('none', 'none', 'once', 'twice', 'retain', 'create'),
    dispose: fc.boolean(),
  });
}

const caseArb = opArb.chain((op) => fc.record({
  op: fc.constant(op),
  tensors: fc.array(tensorSpecArb, { minLength: 1, maxLength: 6 }),
  calls: fc.array(callArb(op), { minLength: 1, maxLength: 5 }),
}));

// ---- the interpreter (runs in the child) -------------------------------------------------------

class GetterError extends Error {}
let opCount = 0;
// Ops live until the process exits and there are at most 4096 of them (KD_RUNTIME_OP_MAX): the
// child retires before (tools/fuzz/child.js), so every case defines its op.
const OPS_PER_CHILD = 4000;
const retire = () => opCount >= OPS_PER_CHILD;

/** Defines the case's op under a fresh name; returns its callable. */
function defineOp(kd, op) {
  const ns = `fz${++opCount}`;
  const args = op.args.map((t, i) => `${t} a${i}`);
  kd.library.define(`${ns}::op(Tensor x${args.map((a) => `, ${a}`).join('')}) -> ${op.returns}`);
  const list = op.args.indexOf('Tensor[]') + 1; // argument index of a Tensor[] (0: none)
  const two = op.returns !== 'Tensor';
  kd.library.impl(`${ns}::op`, 'cpu', (x, ...rest) => {
    let y;
    if (op.impl === 'input') y = x;
    else if (op.impl === 'listElement' && list && rest[list - 1].length) y = rest[list - 1][0];
    else if (op.impl === 'view') y = x.view([-1]);
    else y = x.mul(2);
    return two ? [y, x.add(1)] : y;
  });
  if (!op.autograd) return kd.ops[ns].op;
  kd.library.registerAutograd(`${ns}::op`, (ctx, ...grads) => {
    if (op.backward === 'throws') throw new kd.KindlingError('the formula refuses', 'KD_NOT_SUPPORTED');
    const saved = ctx.savedTensors;
    if (op.save.includes('props')) void ctx.kept; // reads the kept tensors back
    if (op.save.includes('list')) void ctx.pair;
    const g = grads[0].mul(saved.length ? 1 : 2);
    if (op.backward === 'single') return g;
    if (op.backward === 'number') return 7;
    if (op.backward === 'short') return [];
    return [g, ...op.args.map((t) => (t === 'Tensor[]' ? (op.backward === 'listAsTensor' ? g : [g]) : null))];
  }, {
    setupContext(ctx, inputs, output) {
      const tensors = inputs.filter((a) => a instanceof kd.Tensor);
      if (op.save.includes('inputs')) ctx.saveForBackward(...tensors);
      if (op.save.includes('output')) ctx.saveForBackward(...(ctx._saved || []), ...(Array.isArray(output) ? output : [output]));
      if (op.save.includes('props')) ctx.kept = tensors[0];
      if (op.save.includes('list')) ctx.pair = [inputs, output];
      if (op.save.includes('number')) ctx.scale = 2;
    },
  });
  return kd.ops[ns].op;
}

/** A hostile array-like: its length says `like`, it holds a few elements, and maybe lies more. */
function arrayLike(spec, pool, firstTensor) {
  const a = new Array(Math.min(spec.like, 600)).fill(spec.fill);
  a.length = spec.like;
  if (spec.mapSelf) a.map = () => a;
  if (spec.getter) {
    Object.defineProperty(a, 0, {
      get() {
        if (spec.getter === 'throw') throw new GetterError('a getter threw');
        if (firstTensor) firstTensor.dispose();
        return spec.fill;
      },
    });
  }
  return a;
}

async function runCase(kd, c) {
  let fn;
  try {
    fn = defineOp(kd, c.op);
  } catch (e) {
    const bad = badException(kd, e);
    return bad && { kind: 'exception', step: 'define', ...bad };
  }
  const body = () => {
    const pool = [];
    for (const [i, spec] of c.tensors.entries()) {
      try {
        pool.push(makeTensor(kd, spec, pool));
      } catch (e) {
        const bad = badException(kd, e);
        if (bad) return { kind: 'exception', step: `tensors[${i}]`, spec, ...bad };
      }
    }
    if (!pool.length) pool.push(kd.ones([2]));
    for (const [i, call] of c.calls.entries()) {
      const x = pool[call.args[0].t % pool.length];
      const value = (a) => {
        if (a.t !== undefined) return pool[a.t % pool.length];
        if (a.ts !== undefined) return a.ts.map((r) => pool[r.t % pool.length]);
        if (a.like !== undefined) return arrayLike(a.like, pool, x);
        return a.v;
      };
      try {
        const r = fn(...call.args.map(value));
        const outs = (Array.isArray(r) ? r : [r]).filter((t) => t instanceof kd.Tensor);
        if (call.backward !== 'none' && outs.length && outs[0].requiresGrad) {
          const loss = outs[0].sum();
          if (call.backward === 'create') {
            const [g] = kd.autograd.grad(loss, [outs[0]], null, { createGraph: true, allowUnused: true });
            if (g) g.sum();
          } else {
            loss.backward({ retainGraph: call.backward === 'retain' });
            if (call.backward !== 'once') loss.backward();
          }
        }
        if (call.dispose) for (const t of outs) t.dispose();
        noteReturn();
      } catch (e) {
        noteThrow(e);
        if (e instanceof GetterError) continue;
        const bad = badException(kd, e);
        if (bad) return { kind: 'exception', step: `calls[${i}]`, call, ...bad };
      }
    }
    return null;
  };
  return tidyFinding(kd, body, 'case');
}

module.exports = { caseArb, runCase, retire };
