// errors.js - kindling's error classes. Every error kindling throws, from JS or from the native
// addon (through makeError, registered with the binding's setErrorFactory), is one of these,
// with a stable `code` (the C status names in src/core/status.h) and a PyTorch-style message:
//   KD_INVALID_TYPE        -> KindlingTypeError  (extends TypeError)
//   KD_INDEX_OUT_OF_RANGE  -> KindlingRangeError (extends RangeError)
//   anything else          -> KindlingError      (extends Error)
'use strict';

class KindlingError extends Error {
  constructor(message, code = 'KD_ERROR') {
    super(message);
    this.code = code;
  }
  get name() { return 'KindlingError'; }
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

const typeError = (message) => new KindlingTypeError(message, 'KD_INVALID_TYPE');

module.exports = { KindlingError, KindlingTypeError, KindlingRangeError, makeError, typeError };
