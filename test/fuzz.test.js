// fuzz.test.js - short seeded runs of the fuzzers (tools/fuzz.js): generated call sequences over
// every op with hostile arguments, mutated safetensors files through every loader, and ops
// defined at run time (kd.library) called with hostile arguments, each case in a child process.
// A finding - a crash, a hang, an exception that is not a KindlingError with a KD_* code, a tensor
// left alive - fails the test with the command that replays it. The seeds are fixed, so the cases
// are the same on every run; `npm run fuzz` runs longer and with other
// seeds (see tools/fuzz.js).
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

function fuzz(args) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'fuzz.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 600000 });
  assert.equal(r.status, 0, `npm run fuzz -- ${args.join(' ')} found something:\n${r.stdout}\n${r.stderr}`);
  const summary = r.stdout.trim().split('\n').pop();
  const cases = Number((/(\d+) cases/.exec(summary) || [])[1]);
  assert.ok(cases > 0, `no case ran: ${summary}`);
  return summary;
}

describe('fuzzing (seeded short runs)', function () {
  this.timeout(600000); // the time bound is the fuzzer's; shrinking a finding may take longer

  it('API: call sequences over every op with hostile arguments', function () {
    fuzz(['--target', 'api', '--seconds', '15', '--seed', '20261125']);
  });

  it('safetensors: mutated files through every loader', function () {
    fuzz(['--target', 'safetensors', '--seconds', '5', '--seed', '20261125']);
  });

  it('library: runtime ops with int[] and Tensor[] arguments (hostile array-likes) and saved tensors, no leak', function () {
    fuzz(['--target', 'library', '--seconds', '5', '--seed', '20261125']);
  });
});

describe('fuzzing: the child-process pool catches what a case does to the process', function () {
  this.timeout(60000);
  const { Runner } = require('../tools/fuzz/pool');
  let runner;
  before(() => { runner = new Runner({ timeoutMs: 5000 }); });
  after(() => runner.close());

  it('an abort and a segfault are crashes with their signal; the next case runs in a new child', async function () {
    assert.deepEqual(await runner.run('selftest', 'kindlingError'), null);
    for (const [what, signal] of [['abort', 'SIGABRT'], ['segv', 'SIGSEGV']]) {
      const f = await runner.run('selftest', what);
      assert.equal(f.kind, 'crash', what);
      assert.equal(f.signal, signal, what);
    }
    assert.deepEqual(await runner.run('selftest', 'ok'), null);
    assert.equal(runner.starts, 3);
  });

  it('a hang is a finding after the timeout', async function () {
    const f = await runner.run('selftest', 'hang');
    assert.equal(f.kind, 'hang');
  });

  it('an exception that is not a KindlingError is a finding', async function () {
    const f = await runner.run('selftest', 'typeError');
    assert.equal(f.kind, 'exception');
    assert.equal(f.name, 'TypeError');
  });
});
