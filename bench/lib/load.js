// load.js - the load of the machine around what the bench measures, and the environment that
// keeps OpenMP peers from spinning.
//
// Note [Loaded runs]
// Load = the 1-minute load average (/proc/loadavg, os.loadavg()[0]): runnable threads, averaged
// over the last minute. The bench keeps about `threads` of them busy itself (kindling and a peer
// take turns, each with `threads` threads), so a run counts as LOADED when the load read before
// or after it exceeds threads + LOAD_MARGIN: on average at least half a core's worth of other
// work competed with the bench. Its timings then move by up to 2x from run to run, and
// multi-threaded sides suffer most (a descheduled thread stalls the others at every barrier),
// so its ratios are not a comparison of the implementations: the tables mark them
// (bench/lib/format.js) and print the readings next to them. The 1-minute average lags by tens
// of seconds, so a reading before and one after each table (and, in bench/run.js, each
// measured case) bracket what ran in between.
//
// Note [Passive OpenMP peers]
// An OpenMP runtime's idle threads spin by default waiting for the next parallel region (GNU
// libgomp: OMP_WAIT_POLICY unset spins, then sleeps). On a machine where other work runs, the
// spinning threads of one process take the cores the other's threads need, and a descheduled
// thread then stalls its team at each barrier: Debian's PyTorch (libgomp) took 70-540 ms per
// training step on a loaded 2-core machine where, waiting passively with the same 2 threads, it
// took 10-19 ms. Every OpenMP program the bench starts (the PyTorch peers, the native STREAM
// program) therefore runs with OMP_WAIT_POLICY=PASSIVE (unless set by the caller), as kindling's
// own pool spins for 200 us only (Note [Thread pool: spin, then sleep] in src/core/parallel.c)
// and OpenBLAS's idle spin is shortened by OPENBLAS_THREAD_TIMEOUT. TensorFlow.js's CPU backend
// is pure JavaScript on one thread: nothing spins there.
'use strict';
const os = require('node:os');

const LOAD_MARGIN = 0.5;

/** The 1-minute load average now (null where the OS has none: Windows reports zeros). */
function readLoad() {
  const l = os.loadavg()[0];
  return process.platform === 'win32' ? null : l;
}

/** The load above which a run of `threads` threads counts as loaded (Note [Loaded runs]). */
const loadLimit = (threads) => threads + LOAD_MARGIN;

/** Whether any of the readings (null ones ignored) marks a run of `threads` threads as loaded. */
const isLoaded = (threads, ...readings) => readings.some((l) => typeof l === 'number' && l > loadLimit(threads));

/** {before, after, limit, loaded} of a table measured between two readings. */
function loadSpan(threads, before, after) {
  return { before, after, limit: loadLimit(threads), loaded: isLoaded(threads, before, after) };
}

/** One line for next to a table: the readings, the rule and the verdict (span.after undefined: before starting). */
function formatLoad(span, threads, marker = '') {
  const f = (l) => (typeof l === 'number' ? l.toFixed(2) : '?');
  const rule = `loaded above ${span.limit.toFixed(1)} = ${threads} bench thread${threads > 1 ? 's' : ''} + ${LOAD_MARGIN}`;
  const readings = span.after === undefined ? `${f(span.before)} before starting` : `${f(span.before)} before, ${f(span.after)} after`;
  return `load (1-minute average): ${readings} (${rule}): ` +
    (span.loaded ? `LOADED, timings and ratios are not comparable${marker ? `; ratios measured while loaded are marked ${marker}` : ''}`
      : 'quiet');
}

/** The environment of an OpenMP peer: env with OMP_WAIT_POLICY=PASSIVE unless it sets one (Note [Passive OpenMP peers]). */
const passiveOpenMP = (env) => (env.OMP_WAIT_POLICY ? env : { ...env, OMP_WAIT_POLICY: 'PASSIVE' });

module.exports = { LOAD_MARGIN, readLoad, loadLimit, isLoaded, loadSpan, formatLoad, passiveOpenMP };
