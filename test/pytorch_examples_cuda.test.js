// pytorch_examples_cuda.test.js - the ports of pytorch/examples (examples/pytorch/) on CUDA, when
// it is available (a GPU, or the emulated GPU: this file is in test/emulated-gpu.mocharc.json):
// mnist and mnist_rnn pick the accelerator as their originals do, and mnist_hogwild --cuda trains
// the shared CUDA model from two worker threads. Their CPU runs and parity checks are in
// pytorch_examples.test.js.
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');

const ROOT = path.join(__dirname, '..');
const EX = path.join(ROOT, 'examples', 'pytorch');

function run(script, args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(EX, ...script), ...args], { cwd: ROOT, timeout: 170000 }, (err, stdout, stderr) => {
      if (err) { err.message += `\nstdout:\n${stdout}\nstderr:\n${stderr}`; reject(err); } else resolve(stdout);
    });
  });
}

describe('pytorch/examples ports on CUDA', function () {
  if (!kd.cuda.isAvailable()) return;
  this.timeout(180000);

  it('mnist trains on the accelerator (its default)', async function () {
    const out = await run(['mnist', 'main.js'], ['--dry-run', '--epochs', '1', '--limit', '200', '--test-batch-size', '100']);
    assert.match(out, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/200/);
  });

  it('mnist_rnn --accel trains the LSTM on CUDA', async function () {
    const out = await run(['mnist_rnn', 'main.js'], ['--dry-run', '--epochs', '1', '--limit', '200', '--accel']);
    assert.match(out, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/200/);
  });

  it('mnist_hogwild --cuda: two worker threads train the shared CUDA model', async function () {
    const out = await run(['mnist_hogwild', 'main.js'], ['--epochs', '1', '--limit', '500', '--lr', '0.05', '--log-interval', '4', '--cuda']);
    const m = /Test set: Average loss: (\d+\.\d{4}), Accuracy: \d+\/500/.exec(out);
    assert.ok(m && Number(m[1]) < 2.25, out); // 2.30 untrained
  });
});
