// fuzz/cycles.js - the "cycles through views" target of tools/fuzz.js: with grad on, in-place
// ops on a tensor (or on a view of it) whose other arguments were computed from a view of that
// same tensor, so that every way an autograd graph could come to hold the tensor it rewrites is
// tried: the saved values of the ops in between, CopySlices and AsStridedBackward0 of in-place
// ops on views, saved tensor lists (cat, stack). The promise checked: once the case's kd.tidy
// scope ends and a garbage collection has run, kd.memory().liveTensors is back where it started
// (a reference cycle tensor -> grad_fn -> saved tensor -> ... -> the same tensor is freed by
// neither dispose nor GC); and, as for the API target, nothing crashes and every exception is a
// KindlingError with a KD_* code (an in-place op may well be refused, or a backward fail with
// "modified by an inplace operation": those are answers, not findings).
//
// A case is plain data (it crosses to the child over IPC and is printed on failure):
//   { shape, dtype, base, steps: [{ from, chain, reduce, op, args, on }], end }
// `from` is the view the other arguments derive from, `chain` the ops that derive them, `reduce`
// how they become 0-d (or 'none'), `op` an in-place op form of the op list and `args` its
// literal arguments, `on` what it modifies (the tensor itself or a view of it); `end` is what
// happens to the graph before the scope ends (nothing, backward with or without retainGraph,
// autograd.grad with createGraph).
'use strict';
const fc = require('fast-check');
const { badException, noteReturn, noteThrow } = require('./promise');
const { opForms } = require('./api');

const VIEWS = ['self', 'narrow', 'select', 't', 'diagonal', 'unsqueeze', 'expand', 'asStrided', 'view', 'permute',
  'slice', 'unfold', 'squeeze', 'chunk', 'flatten'];
const CHAIN = ['exp', 'sin', 'tanh', 'sigmoid', 'pow', 'mulSelf', 'sqrtAbs', 'relu', 'abs', 'clone', 'contiguous',
  'matmulT', 'softmax', 'logSoftmax', 'cumsum', 'sortValues', 'cat', 'stack', 'mulLeaf', 'detach', 'neg', 'where'];
const REDUCE = ['none', 'max', 'min', 'sum', 'mean', 'amax', 'prod', 'norm', 'logsumexp', 'maxDim'];
const ENDS = ['none', 'backward', 'backwardRetain', 'gradCreateGraph'];
const TENSOR_TYPES = new Set(['Tensor', 'Tensor?', 'Tensor|Scalar']);

/** The in-place method overloads with a tensor argument besides self: [{key, overload, args}]. */
function inplaceForms() {
  const out = [];
  for (const op of opForms()) {
    if (op.form !== 'method' || !op.name.endsWith('_')) continue;
    op.overloads.forEach((schema, overload) => {
      const args = schema.filter((a) => a.name !== 'self' && !a.kwonly);
      if (args.some((a) => TENSOR_TYPES.has(a.type))) out.push({ key: op.key, overload, args });
    });
  }
  return out;
}

// A literal for a non-tensor argument; tensor arguments take the derived values.
const literalArb = (type) => {
  if (type.startsWith('int')) return fc.integer({ min: -1, max: 1 });
  if (type.startsWith('bool')) return fc.boolean();
  if (type.startsWith('str')) return fc.constantFrom('sum', 'prod', 'mean', 'amax', 'floor', 'trunc');
  if (type === 'Tensor?[]') return fc.constant(null);
  return fc.constantFrom(0.5, -1, 2);
};

function caseArb() {
  const forms = inplaceForms();
  const stepArb = fc.constantFrom(...forms).chain((form) => fc.record({
    from: fc.constantFrom(...VIEWS),
    chain: fc.array(fc.constantFrom(...CHAIN), { maxLength: 3 }),
    reduce: fc.constantFrom(...REDUCE),
    op: fc.constant(form.key),
    // per positional argument: 'derived' (a tensor argument) or a literal; optional ones may go
    args: fc.tuple(...form.args.map((a) => (TENSOR_TYPES.has(a.type) ? fc.constant('derived') : literalArb(a.type).map((v) => ({ v })))))
      .chain((args) => fc.integer({ min: form.args.filter((a) => !a.optional).length, max: args.length }).map((n) => args.slice(0, n))),
    on: fc.constantFrom('self', 'self', 'narrow', 'select', 't', 'diagonal', 'view', 'asStrided', 'permute'),
  }));
  return fc.record({
    shape: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
    dtype: fc.constantFrom('float32', 'float64'),
    base: fc.constantFrom('clone', 'mul', 'copyIntoBuffer'),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
    end: fc.constantFrom(...ENDS),
  });
}

// ---- the interpreter (runs in the child) -----------------------------------------------------

function view(kd, t, kind) {
  const d = t.dim();
  const last = d ? t.shape[d - 1] : 1;
  switch (kind) {
    case 'self': return t;
    case 'narrow': return d ? t.narrow(-1, last > 1 ? 1 : 0, last > 1 ? last - 1 : last) : t.view([1]);
    case 'select': return d ? t.select(0, t.shape[0] - 1) : t.view([1]);
    case 't': return d <= 2 ? t.t() : t.transpose(0, -1);
    case 'diagonal': return d >= 2 ? t.diagonal() : t.unsqueeze(0);
    case 'unsqueeze': return t.unsqueeze(0);
    case 'expand': return t.unsqueeze(0).expand([2, ...t.shape]);
    case 'asStrided': return t.asStrided([Math.max(1, Math.min(2, t.numel()))], [1], 0);
    case 'view': return t.view([-1]);
    case 'permute': return t.permute([...t.shape.keys()].reverse());
    case 'slice': return d ? t.slice(0, 0, t.shape[0], 2) : t.view([1]);
    case 'unfold': return d ? t.unfold(-1, 1, 1) : t.view([1]);
    case 'squeeze': return t.squeeze();
    case 'chunk': return d ? t.chunk(2, 0)[0] : t.view([1]);
    case 'flatten': return t.flatten();
    default: throw new Error(`fuzz: unknown view ${kind}`);
  }
}

function derive(kd, x, op, leaf) {
  switch (op) {
    case 'exp': return x.exp();
    case 'sin': return x.sin();
    case 'tanh': return x.tanh();
    case 'sigmoid': return x.sigmoid();
    case 'pow': return x.pow(2);
    case 'mulSelf': return x.mul(x);
    case 'sqrtAbs': return x.abs().add(1).sqrt();
    case 'relu': return x.relu();
    case 'abs': return x.abs();
    case 'clone': return x.clone();
    case 'contiguous': return x.contiguous();
    case 'matmulT': return x.dim() === 2 ? x.matmul(x.t()) : x.mul(x);
    case 'softmax': return x.dim() ? x.softmax(-1) : x.exp();
    case 'logSoftmax': return x.dim() ? x.logSoftmax(-1) : x.exp();
    case 'cumsum': return x.dim() ? x.cumsum(0) : x.neg();
    case 'sortValues': return x.dim() ? x.sort(-1)[0] : x.neg();
    case 'cat': return kd.cat([x.flatten(), x.flatten()]);
    case 'stack': return kd.stack([x, x]);
    case 'mulLeaf': return x.mul(leaf);
    case 'detach': return x.detach();
    case 'neg': return x.neg();
    case 'where': return kd.where(x.gt(0), x, x.mul(2));
    default: throw new Error(`fuzz: unknown derivation ${op}`);
  }
}

function reduce(x, how) {
  switch (how) {
    case 'none': return x;
    case 'max': return x.max();
    case 'min': return x.min();
    case 'sum': return x.sum();
    case 'mean': return x.mean();
    case 'amax': return x.amax();
    case 'prod': return x.prod();
    case 'norm': return x.norm();
    case 'logsumexp': return x.flatten().logsumexp(0);
    case 'maxDim': return x.dim() ? x.flatten().max(0).values : x;
    default: throw new Error(`fuzz: unknown reduction ${how}`);
  }
}

/** Builds the tensor the case modifies: a non-leaf that requires grad, or a buffer given a
 * history by copy_ (CopySlices from its first write on). */
function makeBase(kd, c, leaf) {
  if (c.base === 'clone') return leaf.clone();
  if (c.base === 'mul') return leaf.mul(1.5);
  const buf = kd.zeros(c.shape, { dtype: c.dtype });
  buf.copy_(leaf);
  return buf;
}

/** One step: may throw (a KindlingError is an answer). */
function runStep(kd, t, step, leaf2) {
  let x = view(kd, t, step.from);
  for (const op of step.chain) x = derive(kd, x, op, leaf2);
  x = reduce(x, step.reduce);
  const args = step.args.map((a) => (a === 'derived' ? x : a.v));
  const target = view(kd, t, step.on);
  const method = step.op.split(':')[1];
  return target[method](...args);
}

function end(kd, t, leaf, how) {
  if (how === 'none') return;
  const root = t.sum();
  if (how === 'backward') root.backward();
  else if (how === 'backwardRetain') root.backward({ retainGraph: true });
  else kd.autograd.grad(root, [leaf], null, { createGraph: true, allowUnused: true });
}

function collectGarbage(kd) {
  if (typeof global.gc === 'function') global.gc();
  return kd.memory().liveTensors; // frees the tensors of the handles the GC collected
}

/** Runs one case; resolves to null (the promise kept) or a finding {kind, step, ...}. */
async function runCase(kd, c) {
  if (typeof global.gc !== 'function') return { kind: 'harness', message: 'the cycles target needs node --expose-gc' };
  const live0 = collectGarbage(kd);
  const answer = (what, fn) => {
    try {
      fn();
      noteReturn();
      return null;
    } catch (e) {
      noteThrow(e);
      const bad = badException(kd, e);
      return bad && { kind: 'exception', step: what, ...bad };
    }
  };
  let finding = null;
  try {
    kd.tidy(() => {
      const n = c.shape.reduce((a, b) => a * b, 1);
      const leaf = kd.arange(n, { dtype: c.dtype }).sub(n / 2).mul(0.375).reshape(c.shape).requiresGrad_(true);
      const leaf2 = kd.full([], 0.75, { dtype: c.dtype, requiresGrad: true });
      let t = null;
      finding = answer('base', () => { t = makeBase(kd, c, leaf); });
      for (const [i, step] of c.steps.entries()) {
        if (finding || !t) break;
        finding = answer(`steps[${i}]`, () => runStep(kd, t, step, leaf2));
      }
      if (!finding && t) finding = answer('end', () => end(kd, t, leaf, c.end));
    });
  } catch (e) {
    const bad = badException(kd, e);
    if (bad) return { kind: 'exception', step: 'tidy', ...bad };
  }
  if (finding) return finding;
  const live = collectGarbage(kd);
  if (live !== live0) return { kind: 'leak', message: `${live - live0} tensors alive after the case's kd.tidy scope ended and a GC ran` };
  return null;
}

module.exports = { caseArb, runCase, inplaceForms };
