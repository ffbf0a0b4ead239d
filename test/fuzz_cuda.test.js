// fuzz_cuda.test.js - the short seeded run of the fuzzer's CUDA graphs target (tools/fuzz/graphs.js):
// captured tensors disposed, new ones allocated over them, the cache emptied, the graph replayed;
// no new tensor may be written. Runs where CUDA is available (the emulated GPU's run of the suite,
// test/emulated-gpu.mocharc.json); the children get CUDA as this process does.
'use strict';

const { kd, runFuzzer } = require('./helpers');

describe('fuzzing CUDA graphs (seeded short run)', function () {
  this.timeout(600000);

  it('replays after captured tensors were disposed write into no new tensor', function () {
    if (!kd.cuda.isAvailable()) this.skip();
    runFuzzer(['--target', 'graphs', '--seconds', '5', '--seed', '20261125']);
  });
});
