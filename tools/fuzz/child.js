// fuzz/child.js - a worker process of tools/fuzz/pool.js: loads kindling (the instrumented addon
// when the pool's environment says so), then runs the cases the parent sends over IPC, one at a
// time, answering {id, finding, tally} (finding null when the promise held; tally: the calls
// the case made, see promise.js). A crash or sanitizer abort here
// ends the process, which the pool reports as the finding of the case it was running.
'use strict';
const kd = require('../..');
const { badException } = require('./promise');

// selftest: what the pool must catch, on request (test/fuzz.test.js checks the harness with it)
const selftest = {
  runCase(kd, what) {
    if (what === 'abort') process.abort();
    if (what === 'segv') process.kill(process.pid, 'SIGSEGV');
    if (what === 'hang') for (;;);
    try {
      if (what === 'typeError') null.x; // eslint-disable-line no-unused-expressions
      if (what === 'kindlingError') kd.ones([2]).add(kd.ones([3]));
    } catch (e) {
      const bad = badException(kd, e);
      return bad && { kind: 'exception', ...bad };
    }
    return null;
  },
};
const targets = { api: require('./api'), safetensors: require('./safetensors'), cycles: require('./cycles'), library: require('./library'), graphs: require('./graphs'), selftest };
const { takeTally } = require('./promise');

process.on('message', async (msg) => {
  let finding;
  try {
    finding = await targets[msg.target].runCase(kd, msg.input);
  } catch (e) {
    // a failure of the harness itself (a bad case description): reported, not hidden
    finding = { kind: 'harness', message: String(e && e.stack || e) };
  }
  // a target may use up what a process holds (kd.library's ops live until it exits): it then asks
  // the pool for a new child
  const retire = typeof targets[msg.target].retire === 'function' && targets[msg.target].retire();
  process.send({ id: msg.id, finding, tally: takeTally(), retire });
});
process.send({ ready: true });
