// errors.js - kindling's error classes. Every error kindling throws, from JS or from the native
// addon (through makeError, registered with the binding's setErrorFactory), is one of these,
// with a stable `code` (the C status names in src/core/status.h) and a PyTorch-style message:
//   KD_INVALID_TYPE        -> KindlingTypeError  (extends TypeError)
//   KD_INDEX_OUT_OF_RANGE  -> KindlingRangeError (extends RangeError)
//   anything else          -> KindlingError      (extends Error)
// All three are `instanceof KindlingError` (see Note [One catch for every kindling error]).
'use strict';

// Note [One catch for every kindling error]
// Users catch whatever kindling throws with `err instanceof kd.KindlingError`, and a wrong kind
// of value with `err instanceof TypeError`, as JS users expect. A prototype chain cannot hold
// both Error subclasses, so KindlingTypeError and KindlingRangeError extend TypeError and
// RangeError, and KindlingError answers `instanceof` for them too, through Symbol.hasInstance.
// The override is for KindlingError itself only: a class extending KindlingError inherits the
// static method and gets the ordinary prototype-chain test.
const isInstance = (cls, value) => Function.prototype[Symbol.hasInstance].call(cls, value);

class KindlingError extends Error {
  constructor(message, code = 'KD_ERROR') {
    super(message);
    this.code = code;
  }
  get name() { return 'KindlingError'; }
  static [Symbol.hasInstance](value) {
    if (isInstance(this, value)) return true;
    return this === KindlingError && (isInstance(KindlingTypeError, value) || isInstance(KindlingRangeError, value));
  }
}

class KindlingTypeError extends TypeError {
  constructor(message, code = 'KD_INVALID_TYPE') {
    super(message);
    this.code = code;
  }
  get name() { return 'KindlingTypeError'; }
}

class KindlingRangeError extends RangeError {
  constructor(message, code = 'KD_INDEX_OUT_OF_RANGE') {
    super(message);
    this.code = code;
  }
  get name() { return 'KindlingRangeError'; }
}

/** The error for a status code: the class JS users expect, carrying the caller's stack. */
function makeError(code, message) {
  let err;
  if (code === 'KD_INVALID_TYPE') err = new KindlingTypeError(message, code);
  else if (code === 'KD_INDEX_OUT_OF_RANGE') err = new KindlingRangeError(message, code);
  else err = new KindlingError(message, code);
  // Drop this frame so the stack starts at the native call's caller.
  if (Error.captureStackTrace) Error.captureStackTrace(err, makeError);
  return err;
}

/** A KindlingTypeError (KD_INVALID_TYPE) whose stack starts at the caller. */
function typeError(message) {
  const err = new KindlingTypeError(message, 'KD_INVALID_TYPE');
  if (Error.captureStackTrace) Error.captureStackTrace(err, typeError);
  return err;
}

/**
 * The error of a call that needs a process group (PyTorch's torch.distributed default group),
 * which kindling does not have (no kd.distributed yet): PyTorch's message after `what`, code
 * KD_NO_PROCESS_GROUP.
 */
function noProcessGroupError(what) {
  const err = new KindlingError(`${what}: kindling has no process groups (kd.distributed) yet. Default process group has not been initialized, please make sure to call init_process_group.`, 'KD_NO_PROCESS_GROUP');
  if (Error.captureStackTrace) Error.captureStackTrace(err, noProcessGroupError);
  return err;
}

module.exports = { KindlingError, KindlingTypeError, KindlingRangeError, makeError, typeError, noProcessGroupError };
