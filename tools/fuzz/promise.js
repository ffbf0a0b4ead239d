// fuzz/promise.js - the promise the fuzzers check, for one thrown value: kindling throws only
// KindlingErrors (and its TypeError/RangeError subclasses) whose code is a KD_* status code
// other than KD_INTERNAL (a bug in kindling by definition). Anything else is a finding.
'use strict';

/** null when `e` keeps the promise, else a description of the exception (a finding's fields). */
function badException(kd, e) {
  if (e instanceof kd.KindlingError && typeof e.code === 'string' && /^KD_[A-Z0-9_]+$/.test(e.code) && e.code !== 'KD_INTERNAL') return null;
  return {
    name: e && e.constructor ? e.constructor.name : typeof e,
    code: e && e.code,
    message: String(e && e.message !== undefined ? e.message : e).slice(0, 500),
    stack: e && e.stack ? String(e.stack).split('\n').slice(0, 12).join('\n') : '',
  };
}

module.exports = { badException };
