// profiler/index.js - kd.profiler, PyTorch's torch.profiler: profile(opts, fn) (sync or async) or
// profile(opts).start()/stop(); the ops, autograd nodes and user ranges recorded natively
// (src/profiler/) become events (events.js), key averages and PyTorch's table (table.js), and a
// Chrome trace (chrome_trace.js). recordFunction(name, fn) marks a user range.
'use strict';

const fs = require('node:fs');
const { threadId } = require('node:worker_threads');
const { makeError, typeError } = require('../errors');
const { buildEvents, addCudaTimes, keyAverages } = require('./events');
const { buildTable } = require('./table');
const { chromeTrace } = require('./chrome_trace');
const { checkPath, withFsErrors } = require('../files');

const ProfilerActivity = Object.freeze({ CPU: 'cpu', CUDA: 'cuda' });

function isThenable(x) {
  return x !== null && (typeof x === 'object' || typeof x === 'function') && typeof x.then === 'function';
}

/** Runs fn, then `after` once it returned or threw, or once its Promise settled. */
function around(fn, arg, after) {
  let r;
  try {
    r = fn(arg);
  } catch (e) {
    after();
    throw e;
  }
  if (!isThenable(r)) {
    after();
    return r;
  }
  return Promise.resolve(r).then((v) => { after(); return v; }, (e) => { after(); throw e; });
}

function parseOptions(opts) {
  if (opts === undefined) opts = {};
  if (opts === null || typeof opts !== 'object') throw typeError('profile: options must be an object');
  const activities = opts.activities === undefined ? ['cpu'] : opts.activities;
  if (!Array.isArray(activities)) throw typeError("profile: activities must be an array of 'cpu' and 'cuda'");
  for (const a of activities)
    if (a !== 'cpu' && a !== 'cuda') throw makeError('KD_INVALID_ARGUMENT', `profile: unknown activity '${a}' (expected 'cpu' or 'cuda')`);
  return { cuda: activities.includes('cuda'), recordShapes: !!opts.recordShapes, withStack: !!opts.withStack };
}

/** A list of key-average rows; .table() prints it as PyTorch does. */
class KeyAverages extends Array {
  static get [Symbol.species]() { return Array; }
  table(opts = {}) {
    return buildTable(this, { ...opts, cuda: this.cuda });
  }
}

class Profile {
  constructor(N, opts) {
    this._N = N;
    this._opts = parseOptions(opts);
    this._state = 'new';
    this._events = null;
    this.dropped = 0;
  }

  start() {
    if (this._state !== 'new') throw makeError('KD_INVALID_ARGUMENT', 'profile: start() may be called once per profile');
    this._N.profiler.start(this._opts.recordShapes, this._opts.cuda, this._opts.withStack);
    this._state = 'running';
    return this;
  }

  stop() {
    if (this._state !== 'running') throw makeError('KD_INVALID_ARGUMENT', 'profile: stop() without a running start()');
    const raw = this._N.profiler.stop();
    this._state = 'stopped';
    this._events = buildEvents(raw ? raw.events : [], raw ? raw.kernels : [], threadId);
    this.dropped = raw ? raw.dropped : 0;
    addCudaTimes(this._events);
    return this;
  }

  _stopped(what) {
    if (this._state !== 'stopped') throw makeError('KD_INVALID_ARGUMENT', `profile: ${what} is available once the profile has stopped`);
    return this._events;
  }

  /** The raw events, in start order: { id, name, kind, startUs, endUs, cpuTimeTotal, selfCpuTimeTotal, ... }. */
  events() {
    return this._stopped('events()');
  }

  keyAverages(opts = {}) {
    const o = opts || {};
    const rows = KeyAverages.from(keyAverages(this._stopped('keyAverages()'), !!o.groupByInputShape, o.groupByStackN | 0));
    rows.cuda = this._opts.cuda;
    return rows;
  }

  /** Shorthand for keyAverages().table(opts). */
  table(opts = {}) {
    return this.keyAverages(opts).table(opts);
  }

  /** Writes the trace (Chrome's Trace Event Format) to path; returns path. A file that cannot be
   * written is KD_IO_ERROR. */
  exportChromeTrace(path) {
    checkPath(path, 'exportChromeTrace()');
    const trace = chromeTrace(this._stopped('exportChromeTrace()'), process.pid);
    withFsErrors('exportChromeTrace()', () => fs.writeFileSync(path, JSON.stringify(trace)));
    return path;
  }
}

module.exports = function makeProfiler(N) {
  /** profile(opts) -> a Profile to start()/stop(); profile(opts, fn) -> the stopped Profile (a Promise of it for async fn). */
  function profile(opts, fn) {
    const p = new Profile(N, opts);
    if (fn === undefined) return p;
    if (typeof fn !== 'function') throw typeError('profile: fn must be a function');
    p.start();
    const r = around(fn, p, () => p.stop());
    return isThenable(r) ? r.then(() => p) : p;
  }

  /** recordFunction(name, fn) -> fn's result, run inside a user range; recordFunction(name) -> { end() }. */
  function recordFunction(name, fn) {
    if (typeof name !== 'string') throw typeError('recordFunction: name must be a string');
    const id = N.profiler.begin(name);
    let ended = false;
    const end = () => {
      if (!ended) N.profiler.end(id);
      ended = true;
    };
    if (fn === undefined) return { end, [Symbol.dispose || Symbol.for('nodejs.dispose')]: end };
    if (typeof fn !== 'function') {
      end();
      throw typeError('recordFunction: fn must be a function');
    }
    return around(fn, undefined, end);
  }

  return { profile, recordFunction, ProfilerActivity, Profile };
};
