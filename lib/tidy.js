// tidy.js - deterministic memory management: kd.tidy(fn), kd.keep(t), kd.dispose(x).
//
// Note [Tidy scopes]: a scope records every Tensor created while it is the current scope. When
// its function returns, the scope disposes what it recorded except the tensors reachable from
// the return value (a Tensor, or Tensors inside returned arrays / plain objects), which move to
// the enclosing scope, and tensors passed to kd.keep(), which no scope ever disposes.
//   - Sync functions: the current scope is a plain module variable (state.sync), pushed and
//     popped around the call, so a sync tidy costs a few property writes.
//   - Async functions: the scope travels with the async context (AsyncLocalStorage), so two
//     async tidies running concurrently never see each other's tensors. The store is only
//     looked up while at least one async tidy is running (state.async > 0).
//   - Tensor construction checks one counter (state.active) when no scope is active.
'use strict';

const { AsyncLocalStorage } = require('node:async_hooks');
const { typeError } = require('./errors');

const als = new AsyncLocalStorage();

/** Shared with lib/tensor.js: the constructor tests `state.active !== 0`. */
const state = { active: 0, async: 0, sync: null };

const kept = new WeakSet();
let Tensor = null; // set by bind() (lib/tensor.js requires this module)

class Scope {
  constructor(parent) {
    this.parent = parent;
    this.tensors = [];
    this.open = true;
  }
}

function currentScope() {
  let s = state.sync;
  if (s === null && state.async !== 0) s = als.getStore() || null;
  // A scope that has finished (a stray promise continuation of an async tidy) hands its
  // tensors to the nearest open ancestor.
  while (s !== null && !s.open) s = s.parent;
  return s;
}

/** Records a new tensor in the current scope (called by the Tensor constructor). */
function track(t) {
  const s = currentScope();
  if (s !== null) s.tensors.push(t);
}

function collect(value, out, seen, depth) {
  if (value === null || typeof value !== 'object' || depth > 64) return;
  if (value instanceof Tensor) { out.add(value); return; }
  if (seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collect(value[i], out, seen, depth + 1);
    // tuples (x.max(1)) also carry their elements by name: same objects, nothing new
    return;
  }
  if (value instanceof Map) {
    for (const v of value.values()) collect(v, out, seen, depth + 1);
    return;
  }
  if (value instanceof Set) {
    for (const v of value) collect(v, out, seen, depth + 1);
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return; // class instances are not walked
  for (const k of Object.keys(value)) collect(value[k], out, seen, depth + 1);
}

function close(scope, result) {
  scope.open = false;
  const tensors = scope.tensors;
  scope.tensors = [];
  if (tensors.length === 0) return;
  let returned = null;
  if (result !== null && typeof result === 'object') {
    returned = new Set();
    collect(result, returned, new Set(), 0);
  }
  let parent = scope.parent;
  while (parent !== null && !parent.open) parent = parent.parent;
  for (let i = 0; i < tensors.length; i++) {
    const t = tensors[i];
    if (kept.has(t)) continue;
    if (returned !== null && returned.has(t)) {
      if (parent !== null) parent.tensors.push(t);
      continue;
    }
    t.dispose();
  }
}

function isThenable(x) {
  return x !== null && (typeof x === 'object' || typeof x === 'function') && typeof x.then === 'function';
}

function isAsyncFunction(fn) {
  return fn[Symbol.toStringTag] === 'AsyncFunction';
}

async function runAsync(scope, fn) {
  state.active++;
  state.async++;
  const prevSync = state.sync;
  state.sync = null; // the new scope is innermost for fn's synchronous part too
  let promise;
  try {
    promise = als.run(scope, fn);
  } catch (e) {
    state.sync = prevSync;
    state.active--;
    state.async--;
    close(scope, undefined);
    throw e;
  }
  state.sync = prevSync;
  let result;
  try {
    result = await promise;
  } catch (e) {
    close(scope, undefined);
    throw e;
  } finally {
    state.active--;
    state.async--;
  }
  close(scope, result);
  return result;
}

/** Runs fn with scope current (a throw closes the scope and propagates). */
function runSync(scope, fn) {
  const prev = state.sync;
  state.sync = scope;
  state.active++;
  let result;
  try {
    result = fn();
  } catch (e) {
    state.sync = prev;
    state.active--;
    close(scope, undefined);
    throw e;
  }
  state.sync = prev;
  state.active--;
  return result;
}

/**
 * tidy for a synchronous fn that also says which tensors fn made: returns [result, made] (a Set
 * of the tensors created during fn; those it returns stay alive, as with tidy).
 */
function tidyMade(fn) {
  const scope = new Scope(currentScope());
  const result = runSync(scope, fn);
  const made = new Set(scope.tensors);
  close(scope, result);
  return [result, made];
}

/**
 * Runs fn and disposes every tensor created during it that it does not return.
 * fn may be async: `await kd.tidy(async () => ...)`.
 */
function tidy(nameOrFn, maybeFn) {
  const fn = typeof nameOrFn === 'function' ? nameOrFn : maybeFn;
  if (typeof fn !== 'function') throw typeError('tidy(fn): fn must be a function');
  const scope = new Scope(currentScope());
  if (isAsyncFunction(fn)) return runAsync(scope, fn);

  const result = runSync(scope, fn);
  if (isThenable(result)) {
    // A non-async function that returned a promise (e.g. transpiled async code): what it made
    // synchronously is tracked; tensors made after its first await belong to the enclosing
    // scope. Pass an `async` function to have them tracked too.
    return Promise.resolve(result).then(
      (value) => { close(scope, value); return value; },
      (err) => { close(scope, undefined); throw err; });
  }
  close(scope, result);
  return result;
}

/** Exempts t from every tidy scope (it must then be disposed by hand). Returns t. */
function keep(t) {
  if (!(t instanceof Tensor)) throw typeError('keep(t): t must be a Tensor');
  kept.add(t);
  return t;
}

/** Disposes a Tensor, or every Tensor inside an array / plain object / Map / Set. */
function dispose(x) {
  if (x instanceof Tensor) { x.dispose(); return; }
  const found = new Set();
  collect(x, found, new Set(), 0);
  for (const t of found) t.dispose();
}

function bind(TensorClass) { Tensor = TensorClass; }

module.exports = { state, track, tidy, tidyMade, keep, dispose, bind, currentScope };
