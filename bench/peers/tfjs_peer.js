// tfjs_peer.js - the TensorFlow.js side of kindling's benchmark (bench/lib/tfjs.js runs it).
// Speaks JSON lines on stdin/stdout. The first line configures it:
//   {"dir": "<cache with node_modules/@tensorflow/tfjs>", "capS": 0.5}
// and it answers {"tfjs", "backend", "threads": 1}; then the bench opens one case at a time and
// asks for its samples one by one (below). Same timing rule as kindling (bench/lib/timing.js), CPU backend (pure JS, one thread), every
// result disposed. tfjs's conv2d is NHWC, so its inputs are laid out so; the shapes and FLOPs
// are the same. A case this file does not know gets an "error"; so does a size after a smaller
// size of the same case took longer than capS per call.
// Paired samples (Note [Paired samples] in bench/lib/timing.js), as bench/peers/torch_peer.py:
//   {"op": "open", "name", "size", "warmup_s", "min_sample_s"} -> {"name", "size", "batch"}
//   {"op": "sample", "settle_s"} -> {"sample_s"};  {"op": "close"} -> {"closed": true}
// A size whose probe call takes longer than capS is sampled one call at a time, without settling.
'use strict';
const path = require('node:path');
const { median, nowS, prepare, sample, prepareAsync, sampleAsync } = require('../lib/timing');

// tfjs greets on the console when it loads in Node: keep stdout for the JSON answer.
console.log = console.info = console.warn = (...a) => process.stderr.write(`${a.join(' ')}\n`);

const CASES = (tf) => {
  const pair = (shape) => [tf.randomNormal(shape), tf.randomNormal(shape)];
  const add = (n) => { const [a, b] = pair([n]); return { fn: () => tf.add(a, b).dispose(), inputs: [a, b] }; };
  const matmul = (n) => { const [a, b] = pair([n, n]); return { fn: () => tf.matMul(a, b).dispose(), inputs: [a, b] }; };
  const sum = (dim) => (n) => {
    const x = tf.randomNormal([n, n]);
    return { fn: dim === null ? () => tf.sum(x).dispose() : () => tf.sum(x, dim).dispose(), inputs: [x] };
  };
  const cumsum = (dim) => (n) => { const x = tf.randomNormal([n, n]); return { fn: () => tf.cumsum(x, dim).dispose(), inputs: [x] }; };
  const conv = (cin, cout) => (n) => {
    const x = tf.randomNormal([n, 28, 28, cin]);
    const w = tf.randomNormal([3, 3, cin, cout]);
    return { fn: () => tf.conv2d(x, w, 1, 'same').dispose(), inputs: [x, w] };
  };
  const alloc = (n) => ({ fn: () => tf.zeros([n]).dispose(), inputs: [] });
  return {
    'add.overhead': add,
    'matmul.overhead': matmul,
    add,
    sum: sum(null),
    'sum.dim0': sum(0),
    'sum.dim1': sum(1),
    matmul,
    softmax: (n) => { const x = tf.randomNormal([n, 1024]); return { fn: () => tf.softmax(x).dispose(), inputs: [x] }; },
    'cumsum.dim1': cumsum(1),
    'cumsum.dim0': cumsum(0),
    'conv2d.c32': conv(32, 64),
    'conv2d.c1': conv(1, 32),
    'alloc.small': alloc,
    'alloc.1mb': alloc,
    'data.roundtrip': (n) => { const t = tf.randomNormal([n]); return { fn: () => t.data(), async: true, inputs: [t] }; },
  };
};

/** The case open for paired samples (one at a time). */
class Paired {
  constructor(tf, cases, slowest, capS) {
    Object.assign(this, { tf, cases, slowest, capS, cur: null });
  }

  drop() {
    if (!this.cur) return;
    const { c, name, size, samples } = this.cur;
    if (this.capS && samples.length && median(samples) > this.capS) this.slowest.set(name, [size, median(samples)]);
    for (const t of c.inputs) t.dispose();
    this.cur = null;
  }

  async handle(req) {
    try {
      if (req.op === 'open') {
        this.drop();
        const { name, size } = req;
        const make = this.cases[name];
        const slow = this.slowest.get(name);
        if (!make) return { name, size, error: 'no TensorFlow.js version of this case' };
        if (slow && size > slow[0]) return { name, size, error: `not run: size ${slow[0]} already took ${slow[1].toFixed(2)} s per call` };
        const c = make(size);
        this.cur = { c, name, size, samples: [], batch: 1, single: false };
        const t0 = nowS();
        await c.fn();
        if (this.capS && nowS() - t0 > this.capS) this.cur.single = true;
        else {
          const timing = { warmupS: req.warmup_s, minSampleS: req.min_sample_s };
          this.cur.batch = c.async ? await prepareAsync(c.fn, timing) : prepare(c.fn, timing);
        }
        return { name, size, batch: this.cur.batch };
      }
      if (req.op === 'sample') {
        const cur = this.cur;
        if (!cur) return { error: 'no case is open' };
        const settle = cur.single ? 0 : Number(req.settle_s) || 0;
        const x = cur.c.async ? await sampleAsync(cur.c.fn, cur.batch, settle) : sample(cur.c.fn, cur.batch, settle);
        cur.samples.push(x);
        return { sample_s: x };
      }
      if (req.op === 'close') {
        this.drop();
        return { closed: true };
      }
      return { error: `unknown op ${req.op}` };
    } catch (e) {
      try { this.drop(); } catch { /* reported below */ }
      return { error: String(e.message || e).split('\n')[0] };
    }
  }
}

async function main() {
  const answer = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  const lines = require('node:readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) return;
  const config = JSON.parse(first.value);
  const tf = require(path.join(config.dir, 'node_modules', '@tensorflow', 'tfjs'));
  await tf.setBackend('cpu');
  await tf.ready();
  const cases = CASES(tf);
  const slowest = new Map(); // case -> [size, seconds per call] of a size over capS
  answer({ tfjs: tf.version.tfjs, backend: tf.getBackend(), threads: 1 });
  const paired = new Paired(tf, cases, slowest, config.capS);
  for (let l = await lines.next(); !l.done; l = await lines.next()) {
    if (!l.value.trim()) continue;
    answer(await paired.handle(JSON.parse(l.value)));
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
