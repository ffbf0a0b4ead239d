// timing.js - how every measurement in the bench is taken, kindling and peers alike (the
// PyTorch peer and the native programs follow the same rule):
//   1. warm-up: call fn for warmupS seconds;
//   2. calibrate: double-and-rescale a batch of calls until one batch lasts >= minSampleS;
//   3. take `repeats` samples of `batch` calls each; a sample's value is its time per call;
//   4. report the median sample (and the best, and all samples in the JSON).
// Batching makes microsecond ops measurable with a millisecond-resolution budget; the median
// resists the noise of a shared machine. `sync` (optional) runs at the end of every batch, inside
// the timed region: on a GPU it waits for the queued work. The async forms are the same rule for
// an fn that returns a Promise (awaited call by call, e.g. `await t.dataAsync()`). Steps 1-2 are
// prepare(), step 3 is `repeats` calls of sample(), step 4 is summary().
//
// Note [Paired samples]
// prepare + sample split the rule so that the bench can alternate kindling's samples with a
// peer's, one by one (bench/run.js, Note [Interleaving]): a change of load, clock or thermal
// state during the measurement then lands on both sides of the ratio. Before each sample the
// side calls fn untimed for settleS seconds: its own threads are awake again (a thread pool
// sleeps after a short idle spin; so does OpenMP's) and the other side's threads, which may still
// spin for a few milliseconds after its sample (OpenMP, OpenBLAS), are asleep by the time the
// clock starts.
'use strict';

const nowS = () => Number(process.hrtime.bigint()) / 1e9;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function nextBatch(batch, dt, minSampleS) {
  return batch * (dt > 0 ? Math.floor((minSampleS / dt) * 1.2) + 1 : 10);
}

/** Steps 1-2: warm-up and calibration; returns the batch. */
function prepare(fn, { warmupS, minSampleS }, sync = null) {
  const end = nowS() + warmupS;
  do fn(); while (nowS() < end);
  if (sync) sync();
  let batch = 1;
  for (;;) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) fn();
    if (sync) sync();
    const dt = nowS() - t0;
    if (dt >= minSampleS || batch > 1 << 24) return batch;
    batch = nextBatch(batch, dt, minSampleS);
  }
}

/** One sample of `batch` calls after settleS of untimed calls: seconds per call. */
function sample(fn, batch, settleS = 0, sync = null) {
  if (settleS > 0) {
    const end = nowS() + settleS;
    do fn(); while (nowS() < end);
    if (sync) sync();
  }
  const t0 = nowS();
  for (let i = 0; i < batch; i++) fn();
  if (sync) sync();
  return (nowS() - t0) / batch;
}

async function prepareAsync(fn, { warmupS, minSampleS }) {
  const end = nowS() + warmupS;
  do await fn(); while (nowS() < end);
  let batch = 1;
  for (;;) {
    const t0 = nowS();
    for (let i = 0; i < batch; i++) await fn();
    const dt = nowS() - t0;
    if (dt >= minSampleS || batch > 1 << 24) return batch;
    batch = nextBatch(batch, dt, minSampleS);
  }
}

async function sampleAsync(fn, batch, settleS = 0) {
  if (settleS > 0) {
    const end = nowS() + settleS;
    do await fn(); while (nowS() < end);
  }
  const t0 = nowS();
  for (let i = 0; i < batch; i++) await fn();
  return (nowS() - t0) / batch;
}

const summary = (batch, samples) => ({ batch, medianS: median(samples), bestS: Math.min(...samples), samples });

module.exports = { prepare, sample, prepareAsync, sampleAsync, summary, median, nowS };
