// pytorch_examples_word_language_model.test.js - examples/pytorch/word_language_model against
// pytorch/examples' own main.py in PyTorch 1.13 (fixtures written by
// tools/fixtures/pytorch_examples/word_language_model.py): for each model type (LSTM, tied LSTM,
// GRU, RNN_TANH, RNN_RELU, Transformer with the hand-written SGD update, Transformer with AdamW),
// main.js runs with the same flags on the same corpus from PyTorch's initial weights, dropout
// disabled as there, and every loss the criterion returns - 9 training batches (clipping, update),
// 3 validation passes (which choose the model saved and anneal the learning rate), the test pass
// of the reloaded model - must be PyTorch's. Also: data.js's ids are data.py's, and the
// positional encoding is PyTorch's; and the smoke runs of main.js --dry-run and generate.js.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');

const EXAMPLE = path.join(__dirname, '..', 'examples', 'pytorch', 'word_language_model');
const MAIN = path.join(EXAMPLE, 'main.js');
const CORPUS = path.join(EXAMPLE, 'data', 'fire-keeper');
const FIXTURES = path.join(__dirname, 'fixtures', 'pytorch_examples', 'word_language_model');
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8'));

// Note [Tolerance of the language-model runs]
// Both sides compute in float32 with different summation orders (GEMMs, the log-softmax and loss
// reductions over 537 words, the gradient norm), so one step's loss agrees to a few float32
// roundings (~1e-7 relative). Each update starts from slightly different weights, and the hand-
// written SGD step moves the weights by up to lr * clip = 5 (20 * 0.25) in norm, so the differences
// grow from step to step: over the 13 losses of a run the largest relative difference seen is
// 7e-7 (LSTM, GRU, RNN_TANH, Transformer, AdamW) and 6.5e-5 for RNN_RELU, whose unbounded
// activations take the loss to 370 at lr 20 and amplify every difference. The bounds leave a
// margin of 10 or more for other CPUs' summation orders and stay far below what a wrong step
// changes (a missing clip, another learning rate or annealing: 1e-2 and more).
const RTOL = { default: 1e-5, RNN_RELU: 5e-4 };

function runVariant(name, tmp, extra = []) {
  const v = expected.variants[name];
  const save = path.join(tmp, `${name}.safetensors`);
  const argv = ['--data', CORPUS, '--save', save, ...v.argv, ...extra];
  const savedArgv = process.argv;
  const log = console.log;
  const printed = [];
  process.argv = [process.argv[0], MAIN, ...argv];
  console.log = (...a) => printed.push(a.join(' '));
  delete require.cache[require.resolve(MAIN)];
  let m;
  try {
    m = require(MAIN);
  } finally {
    process.argv = savedArgv;
    console.log = log;
  }
  const weights = kd.loadSync(path.join(FIXTURES, v.weights));
  const { missingKeys, unexpectedKeys } = m.model.loadStateDict(weights, { strict: false });
  assert.deepEqual(unexpectedKeys, []);
  assert.deepEqual(missingKeys, m.args.model === 'Transformer' ? ['pos_encoder.pe'] : []);
  // dropout off, as the fixture's run (nn.Transformer's layers make their own with p = 0.1)
  for (const mod of m.model.modules()) {
    if (mod instanceof kd.nn.Dropout) mod.p = 0;
    if (mod instanceof kd.nn.MultiheadAttention) mod.dropout = 0;
  }
  const calls = [];
  m.criterion.registerForwardHook((_mod, _input, out) => { calls.push({ grad: kd.isGradEnabled(), loss: out.item() }); });
  return { m, calls, printed, weights };
}

async function runMain(r) {
  const log = console.log;
  console.log = (...a) => r.printed.push(a.join(' '));
  try {
    await r.m.main();
  } finally {
    console.log = log;
  }
}

describe('pytorch/examples word_language_model', function () {
  this.timeout(120000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-wlm-')); });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('data.js reads the corpus into data.py\'s dictionary and ids', function () {
    const { Corpus } = require(path.join(EXAMPLE, 'data.js'));
    const c = new Corpus(CORPUS);
    assert.equal(c.dictionary.length, expected.corpus.words.length);
    assert.deepEqual(c.dictionary.idx2word, expected.corpus.words);
    for (const split of ['train', 'valid', 'test']) {
      assert.equal(c[split].dtype, 'int64');
      assert.deepEqual(c[split].arraySync(), expected.corpus[split], split);
    }
  });

  const variants = Object.keys(expected.variants).map((name) => [name, []]);
  // --accel: the same runs on CUDA (the emulated GPU in CI), against the same CPU fixtures
  if (kd.cuda.isAvailable()) variants.push(['LSTM', ['--accel']], ['GRU', ['--accel']], ['Transformer', ['--accel']]);
  for (const [name, extra] of variants) {
    it(`${name}: main.js ${[...expected.variants[name].argv, ...extra].join(' ')} gives main.py's losses, step for step`, async function () {
      const r = runVariant(name, tmp, extra);
      if (extra.includes('--accel')) assert.equal(r.m.model.parameters()[0].device, 'cuda:0');
      const v = expected.variants[name];
      if (v.pe) {
        const pe = r.m.model.posEncoder.pe.narrow(0, 0, v.pe.length).select(1, 0).arraySync();
        // sin(pos * exp(2i * -ln(10000) / d)) in float32: kindling's vectorized expf (glibc's
        // libmvec, src/cpu/unary_math.h) is within 4 ulp where PyTorch's (SLEEF) is within 1, and
        // pos (up to 39) multiplies that difference: 2e-5 covers it; a wrong formula is off by O(1)
        pe.forEach((row, i) => row.forEach((x, j) => assert.ok(Math.abs(x - v.pe[i][j]) <= 2e-5, `pe[${i}][${j}]: ${x} vs ${v.pe[i][j]}`)));
      }
      await runMain(r);
      assert.deepEqual(r.calls.map((c) => c.grad), v.calls.map((c) => c.grad), 'the same sequence of training and evaluation batches');
      let worst = 0;
      r.calls.forEach((c, i) => {
        const e = v.calls[i].loss;
        const rel = Math.abs(c.loss - e) / Math.abs(e);
        worst = Math.max(worst, rel);
        assert.ok(rel <= (RTOL[name] || RTOL.default), `${name} loss ${i}: ${c.loss} vs PyTorch ${e} (relative ${rel.toExponential(2)})`);
      });
      // the same epochs and losses printed (2 decimals, as main.py; the perplexities, 5 digits before
      // the point, may differ in the last)
      const lines = (ls) => ls.filter((l) => l.startsWith('| end of epoch') || l.startsWith('| End of')).map((l) => l.replace(/time: +[\d.]+s/, 'time: -').replace(/ppl +[\d.]+/g, 'ppl -'));
      assert.deepEqual(lines(r.printed), lines(v.log));
      if (process.env.KD_TEST_VERBOSE) process.stderr.write(`      ${name}: largest relative difference ${worst.toExponential(2)}\n`);
    });
  }

  describe('smoke runs', function () {
    const node = (args) => new Promise((resolve, reject) => {
      execFile(process.execPath, args, { cwd: tmp, timeout: 60000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
    });
    for (const model of ['LSTM', 'GRU', 'RNN_TANH', 'RNN_RELU', 'Transformer']) {
      it(`main.js --dry-run --epochs 1 --model ${model}, then generate.js from its checkpoint`, async function () {
        const save = path.join(tmp, `smoke-${model}.safetensors`);
        const out = await node([MAIN, '--dry-run', '--epochs', '1', '--model', model, '--save', save]);
        assert.match(out, /^Using device: cpu$/m);
        assert.match(out, /\| end of epoch {3}1 \| time: +[\d.]+s \| valid loss +[\d.]+ \| valid ppl +[\d.]+$/m);
        assert.match(out, /\| End of training \| test loss +[\d.]+ \| test ppl +[\d.]+/);
        const outf = path.join(tmp, `smoke-${model}.txt`);
        const gen = await node([path.join(EXAMPLE, 'generate.js'), '--checkpoint', save, '--words', '25', '--outf', outf, '--log-interval', '20']);
        assert.match(gen, /\| Generated 0\/25 words\n\| Generated 20\/25 words/);
        const words = fs.readFileSync(outf, 'utf8').split(/\s+/).filter(Boolean);
        assert.equal(words.length, 25);
        const { Corpus } = require(path.join(EXAMPLE, 'data.js'));
        const vocab = new Set(new Corpus(CORPUS).dictionary.idx2word);
        assert.ok(words.every((w) => vocab.has(w)), 'every generated word is in the vocabulary');
      });
    }

    it('bad command lines: argparse\'s usage and errors', async function () {
      await assert.rejects(node([MAIN, '--epochs', 'x']), /argument --epochs: invalid int value: 'x'/);
      await assert.rejects(node([MAIN, '--no-such-flag']), /unrecognized arguments: --no-such-flag/);
      await assert.rejects(node([MAIN, '--dry-run', '--epochs', '1', '--model', 'LSTMX', '--save', path.join(tmp, 'x')]), /An invalid option for `--model` was supplied/);
      assert.match(await node([MAIN, '--help']), /--batch_size N +batch size/);
    });
  });
});
