// examples_cuda.test.js - the examples' smoke runs with --device cuda, when CUDA is available (on
// a machine with a GPU, or on the emulated GPU: `npm test` runs this file with
// KINDLING_CUDA=emulate): the Fashion-MNIST CNN under float16 autocast with a GradScaler, the
// char-transformer for a few steps, and the inference server's load test.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');
const { fashionMnistDir } = require('./helpers');

const ROOT = path.join(__dirname, '..');
const run = (script, args, cb) => execFile(process.execPath, [path.join(ROOT, 'examples', ...script), ...args],
  { timeout: 170000, cwd: os.tmpdir() }, cb);

describe('examples on CUDA (--device cuda)', function () {
  if (!kd.cuda.isAvailable()) return; // examples.test.js covers their CPU runs and the no-CUDA errors
  this.timeout(180000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-examples-cuda-')); });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('fashion-mnist: the CNN trains a short epoch under float16 autocast with a GradScaler and learns', function (done) {
    if (!fashionMnistDir()) {
      console.log('      (skipped: Fashion-MNIST is not installed; apt-get install dataset-fashion-mnist)');
      this.skip();
    }
    const out = path.join(tmp, 'fm');
    run(['fashion-mnist', 'train.js'], ['--model', 'cnn', '--epochs', '1', '--limit', '640', '--amp', '--quiet',
      '--device', 'cuda', '--out', out], (err, stdout, stderr) => {
      if (err) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
      try {
        assert.match(stdout, /on cuda/);
        assert.match(stdout, /autocast float16/);
        const { history } = JSON.parse(fs.readFileSync(path.join(out, 'fashion-mnist-cnn-history.json'), 'utf8'));
        assert.equal(history.length, 1);
        assert.ok(history[0].testAcc > 0.3, `test accuracy ${history[0].testAcc} after 10 steps`); // chance: 0.1
        assert.ok(Number.isFinite(history[0].trainLoss) && history[0].trainLoss < 2.25, `train loss ${history[0].trainLoss}`);
        done();
      } catch (e) { done(e); }
    });
  });

  it('char-transformer: trains 3 steps on a tiny text, saves the model and samples', function (done) {
    const text = path.join(tmp, 'tiny.txt');
    fs.writeFileSync(text, 'the cat sat on the mat. the dog sat on the log.\n'.repeat(20));
    const out = path.join(tmp, 'ct');
    run(['char-transformer', 'train.js'], ['--steps', '3', '--text', text, '--out', out, '--batch', '4', '--block', '16',
      '--dim', '32', '--layers', '1', '--heads', '2', '--eval-every', '2', '--sample-len', '20', '--device', 'cuda'],
    (err, stdout, stderr) => {
      if (err) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
      try {
        assert.match(stdout, /3\/3/);
        assert.match(stdout, /val loss \d/);
        assert.match(stdout, /sample \(temperature 0\.8, top-k 10\)/);
        const sd = kd.loadSync(path.join(out, 'model.safetensors'));
        assert.deepEqual(sd['tok_emb.weight'].shape, [15, 32]);
        for (const t of Object.values(sd)) assert.ok(t.isfinite().all().item(), 'finite weights');
        kd.dispose(Object.values(sd));
        done();
      } catch (e) { done(e); }
    });
  });

  it('inference-server: the load test serves /predict on CUDA with no errors', function (done) {
    run(['inference-server', 'load-test.js'], ['--duration', '0.5', '--concurrency', '2', '--device', 'cuda'], (err, stdout, stderr) => {
      // exit code 1 only means /health p99 was over 10 ms on a busy machine; the run itself must work
      if (err && err.code !== 1) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
      try {
        assert.match(stdout, /device cuda/);
        assert.match(stdout, /\/predict\s+[1-9]\d*/);
        assert.match(stdout, /errors 0/);
        done();
      } catch (e) { done(e); }
    });
  });
});
