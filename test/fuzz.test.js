// fuzz.test.js - short seeded runs of the fuzzers (tools/fuzz.js): generated call sequences over
// every op with hostile arguments, mutated safetensors files through every loader, in-place ops
// under autograd whose other arguments derive from views of the tensor they modify, and ops
// defined at run time (kd.library) called with hostile arguments, each case in a child process.
// A finding - a crash, a hang, an exception that is not a KindlingError with a KD_* code, a tensor
// left alive - fails the test with the command that replays it. The seeds are fixed, so the cases
// are the same on every run; `npm run fuzz` runs longer and with other
// seeds (see tools/fuzz.js).
'use strict';

const { assert, runFuzzer: fuzz } = require('./helpers');

describe('fuzzing (seeded short runs)', function () {
  this.timeout(600000); // the time bound is the fuzzer's; shrinking a finding may take longer

  it('API: call sequences over every op with hostile arguments', function () {
    fuzz(['--target', 'api', '--seconds', '15', '--seed', '20261125']);
  });

  it('safetensors: mutated files through every loader', function () {
    fuzz(['--target', 'safetensors', '--seconds', '5', '--seed', '20261125']);
  });

  it('cycles through views: in-place ops fed from views of their own tensor leave nothing alive', function () {
    fuzz(['--target', 'cycles', '--seconds', '10', '--seed', '20261125']);
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

  it('a case still running when the runner closes (the run is over) is killed with its child and is a hang', async function () {
    const r = new Runner({ timeoutMs: 600000 });
    const answer = r.run('selftest', 'hang');
    while (!r.pending) await new Promise((resolve) => setTimeout(resolve, 50)); // the child has started
    const { child } = r.pending;
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal)));
    const cut = r.close();
    assert.equal(cut && cut.finding.kind, 'hang');
    assert.deepEqual([cut.target, cut.input], ['selftest', 'hang']);
    assert.equal((await answer).kind, 'hang');
    assert.equal(await exited, 'SIGKILL');
  });

  it('an exception that is not a KindlingError is a finding', async function () {
    const f = await runner.run('selftest', 'typeError');
    assert.equal(f.kind, 'exception');
    assert.equal(f.name, 'TypeError');
  });
});
