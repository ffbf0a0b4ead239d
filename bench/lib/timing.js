// timing.js - how every measurement in the bench is taken, kindling and peers alike (the
// PyTorch peer and the native programs follow the same rule):
//   1. warm-up: call fn for warmupS seconds;
//   2. calibrate: double-and-rescale a batch of calls until one batch lasts >= minSampleS;
//   3. take `repeats` samples of `batch` calls each; a sample's value is its time per call;
//   4. report the median sample (and the best, and all samples in the JSON).
// Batching makes microsecond ops measurable with a millisecond-resolution budget; the median
// resists the noise of a shared machine. `sync` (optional) runs at the end of every batch, inside
// the timed region: on a GPU it waits for the queued work. measureAsync is the same rule for an
// fn that returns a Promise (awaited call by call, e.g. `await t.data()`).
'use strict';

const nowS = () => Number(process.hrtime.bigint()) / 1e9;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times fn (no arguments; it must finish its work before returning).
 * @returns {{batch: number, medianS: number, bestS: number, samples: number[]}}
 */
function measure(fn, { warmupS, minSampleS, repeats }, sync = null) {
  const end = nowS() + warmupS;
  do fn(); while (nowS() < end);
  if (sync) sync();
  let batch = 1;
  for (;;) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) fn();
    if (sync) sync();
    const dt = nowS() - t0;
    if (dt >= minSampleS || batch > 1 << 24) break;
    batch = nextBatch(batch, dt, minSampleS);
  }
  const samples = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) fn();
    if (sync) sync();
    samples.push((nowS() - t0) / batch);
  }
  return { batch, medianS: median(samples), bestS: Math.min(...samples), samples };
}

function nextBatch(batch, dt, minSampleS) {
  return batch * (dt > 0 ? Math.floor((minSampleS / dt) * 1.2) + 1 : 10);
}

/** measure() for an async fn: each call is awaited before the next. */
async function measureAsync(fn, { warmupS, minSampleS, repeats }) {
  const end = nowS() + warmupS;
  do await fn(); while (nowS() < end);
  let batch = 1;
  for (;;) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) await fn();
    const dt = nowS() - t0;
    if (dt >= minSampleS || batch > 1 << 24) break;
    batch = nextBatch(batch, dt, minSampleS);
  }
  const samples = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) await fn();
    samples.push((nowS() - t0) / batch);
  }
  return { batch, medianS: median(samples), bestS: Math.min(...samples), samples };
}

module.exports = { measure, measureAsync, median, nowS };
