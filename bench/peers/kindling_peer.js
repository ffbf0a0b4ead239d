// kindling_peer.js - one kindling build as a peer process, for bench/compare_builds.js: loads the
// kindling checkout or installed package at the config's `root` and times the cases of
// bench/cases.js on the CPU with the bench's timing rule (bench/lib/timing.js), one (case, size)
// at a time, in the JSON-lines protocol of the other peers (bench/lib/peer.js):
//   config {"root", "threads"} -> {"root", "binary", "binaryPath", "cpuCapability", "blas", "threads"}
//   {"op": "open", "name", "size", "warmup_s", "min_sample_s"} -> {"name", "size", "batch"}
//   {"op": "sample", "settle_s"} -> {"sample_s"};  {"op": "close"} -> {"closed": true}
// Every failure is answered as {error}.
'use strict';
const { prepare, sample, prepareAsync, sampleAsync } = require('../lib/timing');
const CASES = require('../cases');

async function main() {
  const answer = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  const lines = require('node:readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) return;
  const config = JSON.parse(first.value);
  let kd;
  try {
    kd = require(config.root);
    if (config.threads) kd.setNumThreads(config.threads);
  } catch (e) {
    answer({ error: `cannot load kindling from ${config.root}: ${String(e.message).split('\n')[0]}` });
    return;
  }
  const b = kd.build || {};
  answer({ root: config.root, binary: b.binary, binaryPath: b.binaryPath, cpuCapability: b.cpuCapability, blas: b.blasLibrary, threads: kd.getNumThreads ? kd.getNumThreads() : null });
  let cur = null; // {c, state, fn, batch}
  const drop = () => { if (cur) { const c = cur; cur = null; c.c.teardown(c.state); } };
  const handle = async (req) => {
    try {
      if (req.op === 'open') {
        drop();
        const c = CASES.find((x) => x.name === req.name);
        if (!c) return { name: req.name, size: req.size, error: 'no such case' };
        const why = c.requires ? c.requires(kd, 'cpu') : null;
        if (why) return { name: req.name, size: req.size, error: why };
        const state = c.setup(kd, req.size, 'cpu');
        const fn = () => c.run(state);
        cur = { c, state, fn, batch: 0 };
        const timing = { warmupS: req.warmup_s, minSampleS: req.min_sample_s };
        cur.batch = c.async ? await prepareAsync(fn, timing) : prepare(fn, timing);
        return { name: req.name, size: req.size, batch: cur.batch };
      }
      if (req.op === 'sample') {
        if (!cur) return { error: 'no case is open' };
        const settle = Number(req.settle_s) || 0;
        return { sample_s: cur.c.async ? await sampleAsync(cur.fn, cur.batch, settle) : sample(cur.fn, cur.batch, settle) };
      }
      if (req.op === 'close') { drop(); return { closed: true }; }
      return { error: `unknown op ${req.op}` };
    } catch (e) {
      try { drop(); } catch { /* reported below */ }
      return { error: String(e.message || e).split('\n')[0] };
    }
  };
  for (let l = await lines.next(); !l.done; l = await lines.next()) {
    if (l.value.trim()) answer(await handle(JSON.parse(l.value)));
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
