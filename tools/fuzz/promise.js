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

/**
 * Runs body (which resolves to a finding or null) in a kd.tidy scope: its finding, a foreign
 * exception out of the scope, or a leak when tensors outlive the scope (`what` names the case).
 */
async function tidyFinding(kd, body, what) {
  const live0 = kd.memory().liveTensors;
  let finding = null;
  try {
    finding = await kd.tidy(body);
  } catch (e) {
    const bad = badException(kd, e);
    if (bad) return { kind: 'exception', step: 'tidy', ...bad };
  }
  if (finding) return finding;
  const live = kd.memory().liveTensors;
  if (live !== live0) return { kind: 'leak', message: `${live - live0} tensors alive after the ${what}'s kd.tidy scope ended` };
  return null;
}

// What the calls of the cases did, for the run's summary: how many were made, how many returned,
// the codes of the KindlingErrors the others threw, and the largest values of measures (peaks,
// e.g. a load's RSS growth). The child sends it with each answer.
const tally = { calls: 0, returned: 0, codes: {}, peaks: {} };
function noteReturn() {
  tally.calls++;
  tally.returned++;
}
function noteThrow(e) {
  tally.calls++;
  const code = e && typeof e.code === 'string' ? e.code : (e && e.constructor && e.constructor.name) || typeof e;
  tally.codes[code] = (tally.codes[code] || 0) + 1;
}
function notePeak(name, value) {
  if (!(tally.peaks[name] >= value)) tally.peaks[name] = value;
}
/** The tally since the last call, reset. */
function takeTally() {
  const t = { calls: tally.calls, returned: tally.returned, codes: tally.codes, peaks: tally.peaks };
  tally.calls = 0;
  tally.returned = 0;
  tally.codes = {};
  tally.peaks = {};
  return t;
}
/** Adds tally `t` into `into`. */
function addTally(into, t) {
  into.calls += t.calls;
  into.returned += t.returned;
  for (const [k, v] of Object.entries(t.codes)) into.codes[k] = (into.codes[k] || 0) + v;
  into.peaks = into.peaks || {};
  for (const [k, v] of Object.entries(t.peaks || {})) if (!(into.peaks[k] >= v)) into.peaks[k] = v;
}

module.exports = { badException, tidyFinding, noteReturn, noteThrow, notePeak, takeTally, addTally };
