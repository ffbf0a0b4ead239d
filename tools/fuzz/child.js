// fuzz/child.js - a worker process of tools/fuzz/pool.js: loads kindling (the instrumented addon
// when the pool's environment says so), then runs the cases the parent sends over IPC, one at a
// time, answering {id, finding, tally} (finding null when the promise held; tally: the calls
// the case made, see promise.js). A crash or sanitizer abort here
// ends the process, which the pool reports as the finding of the case it was running.
'use strict';
const kd = require('../..');
const targets = { api: require('./api'), safetensors: require('./safetensors') };
const { takeTally } = require('./promise');

process.on('message', async (msg) => {
  let finding;
  try {
    finding = await targets[msg.target].runCase(kd, msg.input);
  } catch (e) {
    // a failure of the harness itself (a bad case description): reported, not hidden
    finding = { kind: 'harness', message: String(e && e.stack || e) };
  }
  process.send({ id: msg.id, finding, tally: takeTally() });
});
process.send({ ready: true });
