// fuzz/graphs.js - the CUDA graph target of tools/fuzz.js: capture a few ops over static CUDA
// tensors, dispose some of the tensors the capture used (inputs made before it, outputs from
// the graph's pool), allocate fresh tensors (of the disposed sizes, so that they would land on
// the freed blocks), maybe empty the cache, replay, and check that no fresh tensor was written:
// a graph keeps what it captured alive until its reset (Note [Storages a CUDA graph keeps] in
// src/cuda_bridge/graph_keep.c). Runs where the children have CUDA (on the emulated GPU with
// KINDLING_CUDA=emulate, as the api target's 'cuda' devices); a case is a no-op without it.
//
// A case is plain data: { sizes, steps: [{op, a, b}], dispose: [tensor indices], fresh: [sizes],
// emptyCache, replays }. The promise checked: fresh tensors stay zero, every exception is a
// KindlingError with a KD_* code, nothing crashes, and no tensor is left alive afterwards.
'use strict';
const fc = require('fast-check');
const { badException, noteReturn, noteThrow } = require('./promise');

// Captured steps over the tensor list (static inputs first, then each step's output): in-place
// updates of an input, and ops whose output joins the list.
const OPS = ['add_', 'mul_', 'copy_', 'add', 'mul', 'exp', 'sum', 'clone', 'where'];

const sizeArb = fc.constantFrom(1, 3, 64, 256, 1024, 4096, 70000);
const caseArb = fc.record({
  sizes: fc.array(sizeArb, { minLength: 1, maxLength: 4 }),
  steps: fc.array(fc.record({ op: fc.constantFrom(...OPS), a: fc.nat({ max: 15 }), b: fc.nat({ max: 15 }) }), { minLength: 1, maxLength: 8 }),
  dispose: fc.array(fc.nat({ max: 15 }), { maxLength: 6 }),
  fresh: fc.array(sizeArb, { minLength: 1, maxLength: 8 }),
  emptyCache: fc.boolean(),
  replays: fc.integer({ min: 1, max: 3 }),
});

function step(kd, ts, { op, a, b }) {
  const x = ts[a % ts.length], y = ts[b % ts.length];
  const same = x.numel() === y.numel();
  switch (op) {
    case 'add_': x.add_(same ? y : 1); return null;
    case 'mul_': x.mul_(1.5); return null;
    case 'copy_': if (same && x !== y) x.copy_(y); return null;
    case 'add': return same ? x.add(y) : x.add(2);
    case 'mul': return x.mul(3);
    case 'exp': return x.exp();
    case 'sum': return x.sum();
    case 'clone': return x.clone();
    case 'where': return kd.where(x.gt(0), x, y.sum());
    default: throw new Error(`fuzz graphs: unknown op ${op}`);
  }
}

/** Runs one case; resolves to null (the promise kept) or a finding. */
async function runCase(kd, c) {
  if (!kd.cuda.isAvailable()) return null;
  const live0 = kd.memory().liveTensors;
  const g = new kd.cuda.CUDAGraph();
  const all = [];
  let finding = null;
  try {
    const ts = kd.tidy(() => c.sizes.map((n) => kd.arange(n, { dtype: 'float32', device: 'cuda' }).div(n)));
    all.push(...ts);
    const run = () => {
      const list = [...ts];
      for (const s of c.steps) {
        const out = step(kd, list, s);
        if (out) list.push(out);
      }
      return list.slice(ts.length);
    };
    kd.tidy(() => { run(); }); // warm-up, as before any capture
    const outs = kd.cuda.graph(g, () => kd.tidy(run));
    all.push(...outs);
    const used = [...ts, ...outs];
    const gone = [...new Set(c.dispose.map((i) => used[i % used.length]))];
    const goneShapes = gone.map((t) => t.shape); // fresh tensors of these shapes would take the freed blocks
    for (const t of gone) t.dispose();
    if (c.emptyCache) kd.cuda.emptyCache();
    const fresh = [...goneShapes, ...c.fresh.map((n) => [n])].map((shape) => kd.zeros(shape, { device: 'cuda' }));
    all.push(...fresh);
    for (let i = 0; i < c.replays; i++) g.replay();
    fresh.forEach((t, i) => {
      if (finding) return;
      const v = t.dataSync();
      const at = v.findIndex((x) => x !== 0);
      if (at >= 0) finding = { kind: 'graph', message: `fresh tensor ${i} (${v.length} elements) was written by a replay: [${at}] = ${v[at]}` };
    });
    noteReturn();
  } catch (e) {
    noteThrow(e);
    const bad = badException(kd, e);
    if (bad) finding = { kind: 'exception', ...bad };
  } finally {
    g.reset();
    kd.dispose(all);
  }
  if (finding) return finding;
  const live = kd.memory().liveTensors;
  if (live !== live0) return { kind: 'leak', message: `${live - live0} tensors alive after the case` };
  return null;
}

module.exports = { caseArb, runCase };
