// examples.test.js - fast smoke runs of the examples: the inference server (examples/
// inference-server) on an ephemeral port with a tiny random model answers a batched request,
// /health and bad input, and shuts down cleanly (inline and worker engines); the char-transformer
// (examples/char-transformer/train.js) trains 3 steps on a tiny text, saves and samples; the
// Fashion-MNIST CNN (examples/fashion-mnist/train.js) trains one short epoch with --amp when the
// dataset is installed. The inference server's command lines: --help, bad options and --device
// cuda without CUDA give a usage text or one error line and the right exit status.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const kd = require('..');
const { fashionMnistDir } = require('./helpers');

const ROOT = path.join(__dirname, '..');
const SERVER_DIR = path.join(ROOT, 'examples', 'inference-server');

describe('examples', function () {
  this.timeout(60000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-examples-')); });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  describe('inference-server', function () {
    const { makeModel } = require(path.join(SERVER_DIR, 'make-model.js'));
    const { startServer } = require(path.join(SERVER_DIR, 'server.js'));
    const { request, loadTest } = require(path.join(SERVER_DIR, 'load-test.js'));
    const http = require('node:http');
    let modelPath;
    before(() => {
      modelPath = path.join(tmp, 'tiny.safetensors');
      makeModel({ out: modelPath, hidden: [8], inFeatures: 784, seed: 1 });
    });

    for (const worker of [false, true]) {
      it(`batches concurrent requests, answers /health and errors as JSON (${worker ? 'worker' : 'inline'} engine)`, async function () {
        // a long wait so that the requests sent together surely land in one batch
        const s = await startServer({ modelPath, port: 0, worker, maxBatch: 8, maxWaitMs: 50 });
        const agent = new http.Agent({ keepAlive: true });
        const live0 = kd.memory().liveTensors;
        try {
          const img = (k) => Array.from({ length: 784 }, (_, i) => ((i * k) % 17) / 17);
          const rs = await Promise.all([
            request(agent, `${s.url}/predict`, 'POST', JSON.stringify({ inputs: [img(1), img(2)] })),
            request(agent, `${s.url}/predict`, 'POST', JSON.stringify({ input: img(3) })),
            request(agent, `${s.url}/predict`, 'POST', JSON.stringify({ inputs: [img(4)] })),
          ]);
          for (const r of rs) assert.equal(r.status, 200, r.body);
          const bodies = rs.map((r) => JSON.parse(r.body));
          assert.deepEqual(bodies.map((b) => b.predictions.length), [2, 1, 1]);
          assert.deepEqual(bodies.map((b) => b.batch), [4, 4, 4], 'the three requests ran as one forward pass of 4 rows');
          for (const b of bodies) {
            for (const p of b.predictions) {
              assert.equal(p.probs.length, 10);
              assert.ok(Math.abs(p.probs.reduce((a, c) => a + c, 0) - 1) < 1e-4);
              assert.equal(p.class, p.probs.indexOf(Math.max(...p.probs)));
              assert.equal(typeof p.label, 'string');
            }
          }
          // the same input gives the same answer alone as in a batch
          const alone = JSON.parse((await request(agent, `${s.url}/predict`, 'POST', JSON.stringify({ input: img(3) }))).body);
          assert.equal(alone.batch, 1);
          alone.predictions[0].probs.forEach((v, i) => assert.ok(Math.abs(v - bodies[1].predictions[0].probs[i]) < 1e-5));
          // 28x28 nested input works too
          const nested = Array.from({ length: 28 }, (_, r) => img(3).slice(r * 28, r * 28 + 28));
          assert.equal((await request(agent, `${s.url}/predict`, 'POST', JSON.stringify({ input: nested }))).status, 200);

          const h = await request(agent, `${s.url}/health`, 'GET');
          assert.equal(h.status, 200);
          const hb = JSON.parse(h.body);
          assert.equal(hb.status, 'ok');
          assert.equal(hb.engine, worker ? 'worker' : 'inline');
          assert.equal(hb.served.rows, 6);

          const bad = async (method, route, body, status, code) => {
            const r = await request(agent, `${s.url}${route}`, method, body);
            assert.equal(r.status, status, r.body);
            const e = JSON.parse(r.body).error;
            assert.equal(e.code, code);
            assert.equal(typeof e.message, 'string');
          };
          await bad('POST', '/predict', '{not json', 400, 'INVALID_JSON');
          await bad('POST', '/predict', JSON.stringify({ inputs: [[1, 2, 3]] }), 400, 'INVALID_SHAPE');
          await bad('POST', '/predict', JSON.stringify({ inputs: [img(1).map((v, i) => (i === 5 ? 'x' : v))] }), 400, 'INVALID_INPUT');
          await bad('POST', '/predict', JSON.stringify({ images: [] }), 400, 'INVALID_INPUT');
          await bad('POST', '/predict', JSON.stringify({ inputs: Array.from({ length: 9 }, () => img(1)) }), 413, 'BATCH_TOO_LARGE');
          await bad('GET', '/predict', undefined, 405, 'METHOD_NOT_ALLOWED');
          await bad('GET', '/nope', undefined, 404, 'NOT_FOUND');

          // a short load test through the same code the load-test script runs
          const r = await loadTest({ url: s.url, duration: 0.3, warmup: 0.05, concurrency: 4, healthEveryMs: 5 });
          assert.equal(r.errors, 0);
          assert.ok(r.predict.count > 0 && r.health.count > 0);
          assert.ok(r.predict.p50 <= r.predict.p99);
          // (<=: the GC may finalize tensors that were left to it before live0 was read)
          assert.ok(kd.memory().liveTensors <= live0, 'kd.tidy frees every batch tensor');
        } finally {
          agent.destroy();
          await s.close();
        }
        assert.equal(s.server.listening, false);
      });
    }

    it('server.js and load-test.js run from the command line', function (done) {
      execFile(process.execPath, [path.join(SERVER_DIR, 'load-test.js'), '--duration', '0.3', '--concurrency', '2'],
        { cwd: tmp, timeout: 30000 }, (err, stdout, stderr) => {
          // exit code 1 only means /health p99 was over 10 ms on a busy machine; the run itself must work
          if (err && err.code !== 1) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
          try {
            assert.match(stdout, /listening on http:\/\/127\.0\.0\.1:\d+/);
            assert.match(stdout, /\/predict\s+\d+/);
            assert.match(stdout, /event loop responsive/);
            done();
          } catch (e) { done(e); }
        });
    });
  });

  describe('inference-server command lines: usage and errors without stack traces', function () {
    const { spawnSync } = require('node:child_process');
    const run = (script, args) => spawnSync(process.execPath, [path.join(SERVER_DIR, script), ...args],
      { cwd: tmp, encoding: 'utf8', timeout: 30000 });
    const noStack = (r) => assert.doesNotMatch(r.stdout + r.stderr, /^\s+at /m, `a stack trace:\n${r.stdout}\n${r.stderr}`);

    for (const script of ['server.js', 'load-test.js']) {
      it(`${script} --help prints the usage text and exits 0`, function () {
        const r = run(script, ['--help']);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^usage: node \\S*${script.replace('.', '\\.')} \\[options\\]`));
        assert.match(r.stdout, /--device <value>/);
        assert.match(r.stdout, /--help\s+this message/);
        assert.equal(r.stderr, '');
      });

      it(`${script} with an unknown option: one line, exit status 2`, function () {
        const r = run(script, ['--no-such-option']);
        assert.equal(r.status, 2);
        assert.equal(r.stderr, `${script}: Unknown option '--no-such-option' (see --help)\n`);
        noStack(r);
      });
    }

    it('server.js --device cuda without CUDA: one error line, exit status 1, no model written', function () {
      if (kd.cuda.isAvailable()) this.skip();
      const model = path.join(tmp, 'cli', 'model.safetensors');
      const r = run('server.js', ['--device', 'cuda', '--model', model, '--port', '0']);
      assert.equal(r.status, 1);
      assert.equal(r.stderr, 'server.js: --device cuda: CUDA is not available (built without the CUDA backend, or no GPU); use --device cpu\n');
      assert.equal(r.stdout, '');
      assert.equal(fs.existsSync(model), false);
    });

    it('server.js with a bad --device or --engine value: one line, exit status 2', function () {
      for (const args of [['--device', 'gpu'], ['--engine', 'threads']]) {
        const r = run('server.js', [...args, '--model', path.join(tmp, 'cli', 'model.safetensors')]);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`^server\\.js: ${args[0]} must be .*got '${args[1]}' \\(see --help\\)\n$`));
      }
    });

    it('load-test.js --device cuda without CUDA: the server\'s error and one line of its own, exit status 1', function () {
      if (kd.cuda.isAvailable()) this.skip();
      const r = run('load-test.js', ['--device', 'cuda', '--duration', '0.1']);
      assert.equal(r.status, 1);
      noStack(r);
      assert.deepEqual(r.stderr.trim().split('\n'), [
        'server.js: --device cuda: CUDA is not available (built without the CUDA backend, or no GPU); use --device cpu',
        'load-test.js: server.js exited with status 1 before listening',
      ]);
    });
  });

  describe('fashion-mnist', function () {
    it('trains the CNN for one short epoch under autocast (--amp) and learns', function (done) {
      if (!fashionMnistDir()) {
        console.log('      (skipped: Fashion-MNIST is not installed; apt-get install dataset-fashion-mnist)');
        this.skip();
      }
      const out = path.join(tmp, 'fm');
      execFile(process.execPath, [path.join(ROOT, 'examples', 'fashion-mnist', 'train.js'), '--model', 'cnn', '--epochs', '1',
        '--limit', '1280', '--amp', '--quiet', '--out', out], { timeout: 60000 }, (err, stdout, stderr) => {
        if (err) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
        try {
          assert.match(stdout, /autocast bfloat16/);
          const { history } = JSON.parse(fs.readFileSync(path.join(out, 'fashion-mnist-cnn-history.json'), 'utf8'));
          assert.equal(history.length, 1);
          assert.ok(history[0].testAcc > 0.4, `test accuracy ${history[0].testAcc} after 20 steps`); // chance: 0.1
          assert.ok(Number.isFinite(history[0].trainLoss) && history[0].trainLoss < 2.2, `train loss ${history[0].trainLoss}`);
          done();
        } catch (e) { done(e); }
      });
    });
  });

  describe('char-transformer', function () {
    it('trains 3 steps on a tiny text, saves the model and samples', function (done) {
      const text = path.join(tmp, 'tiny.txt');
      fs.writeFileSync(text, 'the cat sat on the mat. the dog sat on the log.\n'.repeat(20));
      const out = path.join(tmp, 'ct');
      execFile(process.execPath, [path.join(ROOT, 'examples', 'char-transformer', 'train.js'),
        '--steps', '3', '--text', text, '--out', out, '--batch', '4', '--block', '16', '--dim', '32', '--layers', '1',
        '--heads', '2', '--eval-every', '2', '--sample-len', '20'], { timeout: 60000 }, (err, stdout, stderr) => {
        if (err) { done(new Error(`${err.message}\n${stdout}\n${stderr}`)); return; }
        try {
          assert.match(stdout, /vocabulary 15/);
          assert.match(stdout, /3\/3/);
          assert.match(stdout, /val loss \d/);
          assert.match(stdout, /sample \(temperature 0\.8, top-k 10\)/);
          const sd = kd.loadSync(path.join(out, 'model.safetensors'));
          assert.deepEqual(sd['tok_emb.weight'].shape, [15, 32]);
          assert.deepEqual(sd['blocks.0.attn.qkv.weight'].shape, [96, 32]);
          kd.dispose(Object.values(sd));
          const meta = kd.safetensors.loadMetadata(path.join(out, 'model.safetensors'));
          assert.equal(JSON.parse(meta.vocab).length, 15);
          assert.ok(fs.readFileSync(path.join(out, 'loss.svg'), 'utf8').startsWith('<svg'));
          done();
        } catch (e) { done(e); }
      });
    });
  });
});
