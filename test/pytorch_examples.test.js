// pytorch_examples.test.js - the ports of pytorch/examples in examples/pytorch/: for each program,
// (1) parity: the port's model and training step, from the deterministic weights and data of
// test/pytorch_examples_hash.js, give PyTorch's losses for the first steps (fixtures
// test/fixtures/pytorch_examples_<name>.json, written by tools/fixtures/pytorch_examples/<name>.py);
// (2) smoke: the program's short mode runs end to end in a child process.
//
// Tolerance: float32 training. A loss is a reduction over the batch and every step moves the
// weights by the previous step's float32 gradients, so two correct float32 implementations
// (different summation orders in conv/matmul) drift apart with the steps. Relative 1e-5 (about
// 80 float32 ulps; the ports agree with PyTorch to 2e-7 here) leaves room for that drift and
// still catches a small change of a loss term (a KL term halved in the VAE moves its loss by
// 2.5e-4), a hyper-parameter or a layer, which move the losses by 1e-4 to percents. Programs
// whose models are deeper say so where they use a larger tolerance.
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');
const { uniformTensor, intTensor, initParams } = require('./pytorch_examples_hash');

const ROOT = path.join(__dirname, '..');
const EX = path.join(ROOT, 'examples', 'pytorch');
const fixture = (name) => require(path.join(__dirname, 'fixtures', `pytorch_examples_${name}.json`));
const RTOL = 1e-5;

function assertLossesClose(actual, expected, rtol = RTOL) {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    // the log prints 6 decimals: half a unit of the last one is allowed on top
    const err = Math.max(0, Math.abs(actual[i] - expected[i]) - 5e-7) / Math.max(Math.abs(expected[i]), 1e-6);
    assert.ok(err <= rtol, `step ${i}: kindling ${actual[i]} vs PyTorch ${expected[i]} (relative error ${err.toExponential(2)} > ${rtol})\n` +
      `kindling: ${actual.join(', ')}\nPyTorch:  ${expected.join(', ')}`);
  }
}

/** A stand-in DataLoader: the same batch `times` times, with .length and .dataset.length. */
function fixedLoader(batch, times) {
  return {
    dataset: { length: batch[0].shape[0] * times },
    length: times,
    * [Symbol.iterator]() { for (let i = 0; i < times; i++) yield batch; },
  };
}

/** The lines fn() prints with console.log (not shown). */
function captureLog(fn) {
  const lines = [];
  const log = console.log;
  console.log = (...a) => { lines.push(a.join(' ')); };
  try { fn(); } finally { console.log = log; }
  return lines;
}

/** The numbers after 'Loss: ' in the training log lines. */
const printedLosses = (lines) => lines.map((l) => /\tLoss: (-?\d+\.\d+)/.exec(l)).filter(Boolean).map((m) => Number(m[1]));

/**
 * The parity check of the programs trained with Adadelta + StepLR (mnist, mnist_rnn,
 * siamese_network): the port's own train() and test() with its default arguments, on the
 * fixture's fixed batches (batch(1) to train, batch(3) to test), from deterministic weights, with
 * the dropouts' p set to 0 (as the fixture scripts do), StepLR stepped after each "epoch".
 * makeModel: the model (default new port.Net(); initParams runs after it); dtype of the run.
 */
function adadeltaParity(port, fx, { makeModel = () => new port.Net(), dropouts = ['dropout1', 'dropout2'], batch = null, testWithArgs = false, dtype = 'float32' } = {}) {
  const { train, test, makeParser } = port;
  const args = makeParser().parseArgs(['--log-interval', '1']);
  const model = makeModel();
  initParams(model);
  model.to(dtype);
  for (const d of dropouts) model[d].p = 0;
  const optimizer = new kd.optim.Adadelta(model.parameters(), { lr: args.lr });
  const scheduler = new kd.optim.lrScheduler.StepLR(optimizer, { stepSize: 1, gamma: args.gamma });
  const [lo, hi] = fx.range || [0, 1];
  batch = batch || ((seed) => [uniformTensor([fx.batch, 1, 28, 28], seed, lo, hi), intTensor([fx.batch], seed + 1, 10)]);
  const loader = fixedLoader(batch(1), fx.stepsPerEpoch);
  const lines = [];
  for (let epoch = 1; epoch <= fx.steps / fx.stepsPerEpoch; epoch++) {
    lines.push(...captureLog(() => train(args, model, 'cpu', loader, optimizer, epoch)));
    scheduler.step();
  }
  assertLossesClose(printedLosses(lines), fx.losses);
  const testLoader = fixedLoader(batch(3), 1);
  const out = captureLog(() => (testWithArgs ? test(args, model, 'cpu', testLoader) : test(model, 'cpu', testLoader))).join('\n');
  assert.match(out, new RegExp(`Average loss: ${(fx.testLoss / fx.batch).toFixed(4)}, Accuracy: ${fx.correct}/${fx.batch} `));
}

/** Runs node <script> <args> (env added to the environment) and resolves {stdout, stderr}; rejects with both on a non-zero exit. */
function run(script, args, env = {}, timeout = 60000) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, ...args], { cwd: ROOT, timeout, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err) { err.message += `\nstdout:\n${stdout}\nstderr:\n${stderr}`; reject(err); } else resolve({ stdout, stderr });
    });
  });
}

describe('pytorch/examples ports', function () {
  this.timeout(60000);

  describe('mnist', function () {
    it('trains as PyTorch does: Adadelta + StepLR losses of 8 steps from the same weights', function () {
      adadeltaParity(require(path.join(EX, 'mnist', 'main.js')), fixture('mnist'));
    });

    it('runs its short mode end to end', async function () {
      const { stdout } = await run(path.join(EX, 'mnist', 'main.js'), ['--dry-run', '--epochs', '1', '--limit', '500']);
      assert.match(stdout, /Train Epoch: 1 \[0\/500 \(0%\)\]\tLoss: \d+\.\d{6}/);
      assert.match(stdout, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/500 \(\d+%\)/);
    });

    it('trains on labelled synthetic data when Fashion-MNIST is absent', async function () {
      const { stdout, stderr } = await run(path.join(EX, 'mnist', 'main.js'), ['--dry-run', '--epochs', '1', '--limit', '500'],
        { FASHION_MNIST_DIR: path.join(ROOT, 'no-such-folder') });
      assert.match(stderr, /Fashion-MNIST not found in .*no-such-folder.*: using SYNTHETIC 28x28 data/);
      assert.match(stdout, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/500 \(\d+%\)/);
    });
  });

  describe('regression', function () {
    const REG = path.join(EX, 'regression', 'main.js');

    it('takes the same steps as PyTorch: smooth L1 losses of 10 steps and the learned polynomial', function () {
      const fx = fixture('regression');
      const { POLY_DEGREE, makeFeatures, f, step, setTarget } = require(REG);
      setTarget(uniformTensor([POLY_DEGREE, 1], 1, -5, 5), uniformTensor([1], 2, -5, 5));
      const fc = new kd.nn.Linear(POLY_DEGREE, 1);
      initParams(fc);
      const losses = [];
      for (let i = 0; i < fx.steps; i++) {
        const x = makeFeatures(uniformTensor([32], 10 + i, -2, 2));
        losses.push(step(fc, x, f(x)));
      }
      assertLossesClose(losses, fx.losses);
      assertLossesClose(fc.weight.view(-1).tolist(), fx.weight);
      assertLossesClose(fc.bias.tolist(), fx.bias);
    });

    it('runs to convergence', async function () {
      const { stdout } = await run(REG, []);
      assert.match(stdout, /^Loss: 0\.000\d+ after \d+ batches\n==> Learned function:\ty = [+-]\d+\.\d\d x\^1 .* x\^4 [+-]\d+\.\d\d\n==> Actual function:/);
    });
  });

  describe('vae', function () {
    const VAE_MAIN = path.join(EX, 'vae', 'main.js');

    it('trains as PyTorch does: Adam losses of 8 steps with the same weights and noise', function () {
      const fx = fixture('vae');
      const { VAE, lossFunction } = require(VAE_MAIN);
      const randnLike = kd.randnLike;
      let noiseSeed = 100;
      kd.randnLike = (t) => uniformTensor(t.shape, noiseSeed++, -1.7, 1.7);
      try {
        const model = new VAE();
        initParams(model);
        const optimizer = new kd.optim.Adam(model.parameters(), { lr: 1e-3 });
        const data = uniformTensor([fx.batch, 1, 28, 28], 1, 0, 1);
        model.train();
        const losses = [];
        for (let i = 0; i < fx.steps; i++) {
          optimizer.zeroGrad();
          const [reconBatch, mu, logvar] = model(data);
          const loss = lossFunction(reconBatch, data, mu, logvar);
          loss.backward();
          optimizer.step();
          losses.push(loss.item());
        }
        assertLossesClose(losses, fx.losses);
        model.eval();
        kd.noGrad(() => {
          const [reconBatch, mu, logvar] = model(data); // the noise of seed 108, as PyTorch's ninth randn_like
          assertLossesClose([lossFunction(reconBatch, data, mu, logvar).item()], [fx.testLoss]);
        });
      } finally {
        kd.randnLike = randnLike;
      }
    });

    it('runs one short epoch and writes its images', async function () {
      const { stdout } = await run(VAE_MAIN, ['--epochs', '1', '--limit', '256']);
      assert.match(stdout, /Train Epoch: 1 \[0\/256 \(0%\)\]\tLoss: \d+\.\d{6}\n====> Epoch: 1 Average loss: \d+\.\d{4}\n====> Test set loss: \d+\.\d{4}/);
      for (const f of ['reconstruction_1.png', 'sample_1.png']) {
        const png = require('node:fs').readFileSync(path.join(EX, 'vae', 'results', f));
        assert.equal(png.subarray(1, 4).toString(), 'PNG');
      }
    });
  });

  describe('mnist_rnn', function () {
    const MAIN = path.join(EX, 'mnist_rnn', 'main.js');

    it('trains as PyTorch does: LSTM + BatchNorm, Adadelta + StepLR losses of 8 steps, then eval with the running statistics', function () {
      adadeltaParity(require(MAIN), fixture('mnist_rnn'), { testWithArgs: true });
    });

    it('runs its short mode end to end', async function () {
      const { stdout } = await run(MAIN, ['--dry-run', '--epochs', '1', '--limit', '500']);
      assert.match(stdout, /Train Epoch: 1 \[0\/500 \(0%\)\]\tLoss: \d+\.\d{6}/);
      assert.match(stdout, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/500 \(\d+%\)/);
    });
  });

  describe('siamese_network', function () {
    const MAIN = path.join(EX, 'siamese_network', 'main.js');

    // in float64: see tools/fixtures/pytorch_examples/siamese_network.py (4 values per channel
    // in the last BatchNorm layers make float32 gradients ill-conditioned, in PyTorch too)
    it('trains as PyTorch does: ResNet-18 pairs, BCELoss, Adadelta + StepLR losses of 4 steps, then eval (float64)', function () {
      const fx = fixture('siamese_network');
      const port = require(MAIN);
      adadeltaParity(port, fx, {
        makeModel: () => new port.SiameseNetwork(),
        dropouts: [],
        dtype: 'float64',
        batch: (seed) => [uniformTensor([fx.batch, 1, 28, 28], seed, 0, 255).double(), uniformTensor([fx.batch, 1, 28, 28], seed + 1, 0, 255).double(),
          kd.tensor(Array.from({ length: fx.batch }, (_, i) => (i % 2 === 0 ? 1 : 0)), { dtype: 'float64' })],
      });
    });

    it('runs its short mode end to end', async function () {
      const { stdout } = await run(MAIN, ['--dry-run', '--epochs', '1', '--limit', '100', '--batch-size', '8', '--test-batch-size', '100']);
      assert.match(stdout, /Train Epoch: 1 \[0\/100 \(0%\)\]\tLoss: \d+\.\d{6}/);
      assert.match(stdout, /Test set: Average loss: \d+\.\d{4}, Accuracy: \d+\/100 \(\d+%\)/);
    });
  });

  describe('mnist_hogwild', function () {
    const MAIN = path.join(EX, 'mnist_hogwild', 'main.js');

    it('a worker trains as PyTorch does: SGD with momentum, losses of 8 steps, then testEpoch', function () {
      const fx = fixture('mnist_hogwild');
      const { Net, makeParser } = require(MAIN);
      const { trainEpoch, testEpoch } = require(path.join(EX, 'mnist_hogwild', 'train.js'));
      const args = makeParser().parseArgs(['--log-interval', '1']);
      const model = new Net();
      initParams(model);
      model.conv2_drop.p = 0;
      const dropout = kd.nn.functional.dropout;
      kd.nn.functional.dropout = (x) => x; // as the fixture: F.dropout made the identity
      try {
        const optimizer = new kd.optim.SGD(model.parameters(), { lr: args.lr, momentum: args.momentum });
        const [lo, hi] = fx.range;
        const loader = fixedLoader([uniformTensor([fx.batch, 1, 28, 28], 1, lo, hi), intTensor([fx.batch], 2, 10)], fx.steps);
        assertLossesClose(printedLosses(captureLog(() => trainEpoch(1, args, model, 'cpu', loader, optimizer))), fx.losses);
        const testLoader = fixedLoader([uniformTensor([fx.batch, 1, 28, 28], 3, lo, hi), intTensor([fx.batch], 4, 10)], 1);
        const out = captureLog(() => testEpoch(model, 'cpu', testLoader)).join('\n');
        assert.match(out, new RegExp(`Average loss: ${(fx.testLoss / fx.batch).toFixed(4)}, Accuracy: ${fx.correct}/${fx.batch} `));
      } finally {
        kd.nn.functional.dropout = dropout;
      }
    });

    it('two worker threads train the shared model, which the main thread then tests', async function () {
      const { stdout } = await run(MAIN, ['--epochs', '1', '--limit', '1000', '--log-interval', '5', '--lr', '0.05']);
      const workers = new Set(stdout.split('\n').filter((l) => /\tTrain Epoch: 1 /.test(l)).map((l) => l.split('\t')[0]));
      assert.equal(workers.size, 2, stdout);
      const m = /Test set: Average loss: (\d+\.\d{4}), Accuracy: (\d+)\/1000/.exec(stdout);
      assert.ok(m, stdout);
      // 2 x 16 SGD steps on the shared weights (about 1.7; 2.30 untrained, as with --num-processes 0)
      assert.ok(Number(m[1]) < 2.1, stdout);
    });
  });

  describe('reinforcement_learning', function () {
    const RL = path.join(EX, 'reinforcement_learning');
    const { CartPoleEnv } = require(path.join(RL, 'cartpole.js'));

    /**
     * The fixture's episodes replayed with the port's selectAction and finishEpisode on the port's
     * CartPole: the same initial states, the actions PyTorch sampled (Categorical#sample returns
     * them), from the same weights; each episode's reward and loss must be PyTorch's.
     */
    function replay(port, episodes, model) {
      const { Categorical } = kd.distributions;
      const sample = Categorical.prototype.sample;
      let queue = [];
      Categorical.prototype.sample = function () { return kd.tensor(queue.shift()).view(this.batchShape); };
      try {
        const env = new CartPoleEnv();
        const losses = [];
        for (const ep of episodes) {
          env.reset();
          env.state = ep.init.slice();
          let state = Float32Array.from(ep.init);
          queue = ep.actions.slice();
          let epReward = 0;
          for (let t = 1; t < 10000; t++) {
            assert.ok(queue.length > 0, 'the episode runs longer than PyTorch\'s');
            const action = port.selectAction(state);
            let reward, terminated, truncated;
            [state, reward, terminated, truncated] = env.step(action);
            model.rewards.push(reward);
            epReward += reward;
            if (terminated || truncated) break;
          }
          assert.equal(queue.length, 0, 'the episode ends before PyTorch\'s');
          assert.equal(epReward, ep.reward);
          losses.push(port.finishEpisode());
        }
        assertLossesClose(losses, episodes.map((e) => e.loss));
      } finally {
        Categorical.prototype.sample = sample;
      }
    }

    it('REINFORCE: the same episodes give PyTorch\'s losses', function () {
      const port = require(path.join(RL, 'reinforce.js'));
      const g = port.setup([]);
      initParams(g.policy);
      g.policy.dropout.p = 0;
      replay(port, fixture('reinforcement_learning').reinforce, g.policy);
    });

    it('actor-critic: the same episodes give PyTorch\'s losses', function () {
      const port = require(path.join(RL, 'actor_critic.js'));
      const g = port.setup([]);
      initParams(g.model);
      replay(port, fixture('reinforcement_learning').actorCritic, g.model);
    });

    it('CartPole-v1 follows gym: termination past 12 degrees, reward 1 on the falling step, truncation at 500', function () {
      const env = new CartPoleEnv();
      env.reset({ seed: 1 });
      env.state = [0, 0, 0.21, 0];
      const [obs, reward, terminated, truncated] = env.step(0); // pushed left: falls further right
      assert.ok(obs instanceof Float32Array);
      assert.deepEqual([reward, terminated, truncated], [1, true, false]);
      assert.deepEqual(env.step(0).slice(1, 3), [0, true]);
      env.reset();
      env.state = [0, 0, 0, 0];
      let last;
      for (let i = 0; i < 500; i++) last = env.step(i % 2);
      assert.equal(last[3], true);
      assert.equal(env.spec.rewardThreshold, 475);
    });

    for (const file of ['reinforce.js', 'actor_critic.js']) {
      it(`${file} runs a few episodes end to end`, async function () {
        const { stdout } = await run(path.join(RL, file), ['--max-episodes', '20']);
        assert.match(stdout, /^Episode 10\tLast reward: \d+\.00\tAverage reward: \d+\.\d\d\nEpisode 20\t/);
      });
    }
  });
});
