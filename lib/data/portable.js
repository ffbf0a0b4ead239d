// portable.js - what a DataLoader worker thread can load: JS objects and closures cannot be sent
// to another thread, so the dataset, a collateFn and a workerInitFn cross as a recipe that the
// worker runs again. A recipe ("portable") is one of:
//   - a module: a path string, or {module, export, args} (`module` resolved from the current
//     directory when relative; `export` names one export, default the module itself or its
//     `default`). For a dataset, an export that is a function is a factory, called with `args`
//     (a class is constructed with `new`); an object export is the dataset itself. For a
//     collateFn or workerInitFn, the export is the function.
//   - a self-contained function: its source is sent (fn.toString()) and compiled again in the
//     worker, with `kd` (kindling) and `require` (resolving from the current directory) in scope
//     and nothing else: a function that uses variables of its enclosing scope fails in the worker
//     with a ReferenceError, which surfaces with the worker's stack. For a dataset the function is
//     a factory, called with no arguments.
//   - a dataset made by kd.data.fromModule(...), which carries its recipe.
// toPortable makes the recipe on the main thread (checking what can be checked there: the module
// resolves, the source compiles); load runs it, on either thread. Recipes are structured-clone
// data (args must be too).
'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');
const { KindlingError, typeError } = require('../errors');
const { isPlainObject } = require('./tree');

const SOURCE = Symbol.for('kindling.data.portableSource');

const invalidArg = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');

function cwdRequire() { return createRequire(path.join(process.cwd(), '[kindling-data-worker].js')); }

// The recipe of `value` (a module spec, a function, or a dataset from fromModule), or null when
// it has none; `what` names it in errors.
function toPortable(value, what) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') value = { module: value };
  if (typeof value === 'object' && value[SOURCE]) return value[SOURCE];
  if (isPlainObject(value) && 'module' in value) {
    const { module: mod, export: exp = null, args = [] } = value;
    if (typeof mod !== 'string' || mod === '') throw typeError(`${what}: module must be a path string`);
    if (exp !== null && typeof exp !== 'string') throw typeError(`${what}: export must be a string`);
    if (!Array.isArray(args)) throw typeError(`${what}: args must be an array`);
    let resolved;
    try {
      resolved = cwdRequire().resolve(path.isAbsolute(mod) || mod.startsWith('.') ? path.resolve(mod) : mod);
    } catch (e) {
      throw invalidArg(`${what}: cannot find module '${mod}' (${e.message.split('\n')[0]})`);
    }
    return { module: resolved, export: exp, args };
  }
  if (typeof value === 'function') {
    const source = Function.prototype.toString.call(value);
    if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) {
      throw invalidArg(`${what}: a built-in or bound function has no source to send to a worker thread; give a module ({module, export}) instead`);
    }
    try {
      // eslint-disable-next-line no-new-func
      new Function('kd', 'require', `'use strict'; return (${source});`);
    } catch (e) {
      throw invalidArg(`${what}: the function's source does not compile on its own (${e.message}); `
        + 'write it as a function or arrow expression, or give a module ({module, export})');
    }
    return { source };
  }
  return null;
}

// Runs a recipe: the dataset (asDataset: factories are called) or the function it names.
function load(spec, kd, asDataset) {
  let value;
  if (spec.source !== undefined) {
    // eslint-disable-next-line no-new-func
    value = new Function('kd', 'require', `'use strict'; return (${spec.source});`)(kd, cwdRequire());
    return asDataset ? value() : value;
  }
  const mod = require(spec.module);
  if (spec.export !== null) {
    if (!(spec.export in Object(mod))) throw invalidArg(`module '${spec.module}' has no export '${spec.export}'`);
    value = mod[spec.export];
  } else {
    value = mod !== null && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
  }
  if (!asDataset) {
    if (typeof value !== 'function') throw typeError(`module '${spec.module}'${spec.export ? ` export '${spec.export}'` : ''} is not a function`);
    return value;
  }
  if (typeof value === 'function') {
    const isClass = /^class[\s{]/.test(Function.prototype.toString.call(value));
    return isClass ? new value(...spec.args) : value(...spec.args);
  }
  return value;
}

// A dataset's object with its recipe attached (not enumerable), so a DataLoader can send it.
function tag(dataset, spec) {
  if (dataset !== null && (typeof dataset === 'object' || typeof dataset === 'function') && Object.isExtensible(dataset)) {
    Object.defineProperty(dataset, SOURCE, { value: spec, configurable: true });
  }
  return dataset;
}

module.exports = { toPortable, load, tag, SOURCE, isPlainObject };
