// known_failures.js - rewrites a known-failures file of the OpInfo and ModuleInfo harnesses
// (test/opinfo_known_failures.json, test/moduleinfo_known_failures.json) to the failures a report
// saw: per device and entry, the failing forward and gradient sample ids, keeping the reasons
// already written (a new entry gets "TODO: <its first failure>") and the hand-written mayDiffer
// lists of nondeterministic samples. A device the report did not run keeps its lists.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * file: the JSON to write; header: its '//' comment; seen: {device: {entry: {forward: [ids],
 * grad: [ids], first: message}}} for the devices run; known: the lists as loaded.
 */
function writeKnownFailures(file, header, seen, known) {
  const out = { '//': header };
  for (const device of ['cpu', 'cuda']) {
    if (!seen[device]) { out[device] = known[device]; continue; }
    out[device] = {};
    const names = new Set([...Object.keys(seen[device]), ...Object.keys(known[device]).filter((n) => known[device][n].mayDiffer)]);
    for (const name of [...names].sort()) {
      const old = known[device][name];
      const f = seen[device][name] || { forward: [], grad: [], first: '' };
      out[device][name] = { reason: (old && old.reason) || `TODO: ${f.first.slice(0, 200)}` };
      if (f.forward.length) out[device][name].forward = f.forward;
      if (f.grad.length) out[device][name].grad = f.grad;
      if (old && old.mayDiffer) out[device][name].mayDiffer = old.mayDiffer; // written by hand: nondeterministic samples
    }
  }
  fs.writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}

module.exports = { writeKnownFailures };
