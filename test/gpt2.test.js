// gpt2.test.js - the GPT-2 decoder of examples/gpt2 against PyTorch 1.13 (test/fixtures/gpt2, written
// by tools/fixtures/gpt2.py from a plain-torch GPT-2 with Hugging Face's names): the Hub-style
// safetensors state dict loads by name, logits match within 1e-4, greedy decoding reproduces
// PyTorch's 64 tokens, KV-cache decoding equals full recomputation (one token at a time and in
// chunks), prompts of different lengths (left padding with an attention mask) decode as each
// alone, sampling is reproducible for a seed, and streaming yields generate()'s tokens. On the
// CPU and, when present, on CUDA (KINDLING_CUDA=emulate runs the emulated GPU); also bad options,
// and a smoke run of examples/gpt2/generate.js.
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { promisify } = require('node:util');
const { execFile } = require('node:child_process');
const kd = require('..');
const { GPT2LMHeadModel, KVCache, configFromHuggingFace } = require('../examples/gpt2/model');
const { drawTopP } = require('../examples/gpt2/generation');

const execFileP = promisify(execFile);
const ROOT = path.join(__dirname, '..');
const DIR = path.join(__dirname, 'fixtures', 'gpt2');
const expected = require(path.join(DIR, 'expected.json'));
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];

const ids64 = (rows) => kd.tensor(rows.map((r) => r.map(BigInt)), { dtype: 'int64' });
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

describe('examples/gpt2', function () {
  this.timeout(120000);

  for (const device of devices) {
    describe(device, function () {
      let model;
      before(() => { model = GPT2LMHeadModel.fromSafetensors(path.join(DIR, 'tiny.safetensors'), expected.config, { device }); });

      const forward = (rows, cache = null) => kd.inferenceMode(() => kd.tidy(() => {
        const x = ids64(rows);
        return model(device === 'cpu' ? x : x.to(device), cache).cpu().dataSync();
      }));

      it('loads the Hub-style state dict by name and matches PyTorch logits within 1e-4', function () {
        assert.equal(model.transformer.h[0].attn.c_attn.weight.shape.join(), '64,192'); // Conv1D: [in, out]
        const got = forward(expected.inputIds);
        assert.equal(got.length, expected.logits.length);
        assert.ok(maxDiff(got, expected.logits) < 1e-4, `max |diff| ${maxDiff(got, expected.logits)}`);
      });

      it('greedy generation reproduces PyTorch token for token (64 tokens)', async function () {
        const prompt = expected.inputIds[0];
        const out = await model.generate(prompt, { maxNewTokens: 64 });
        assert.deepEqual(out.slice(0, prompt.length), prompt);
        assert.deepEqual(out.slice(prompt.length), expected.greedy);
        // a 1-D tensor prompt gives the same
        const t = await model.generate(kd.tensor(prompt.map(BigInt), { dtype: 'int64' }), { maxNewTokens: 8 });
        assert.deepEqual(t.slice(prompt.length), expected.greedy.slice(0, 8));
      });

      it('KV-cache decoding equals full recomputation', function () {
        const seq = [...expected.inputIds[1], ...expected.greedy.slice(0, 12)];
        const full = forward([seq]);
        const V = expected.config.vocabSize;
        for (const chunks of [[8, ...Array(12).fill(1)], [5, 7, 8]]) {
          const cache = kd.inferenceMode(() => model.makeCache(1, seq.length));
          try {
            let at = 0;
            for (const n of chunks) {
              const got = forward([seq.slice(at, at + n)], cache);
              assert.ok(maxDiff(got, full.subarray(at * V, (at + n) * V)) < 1e-4, `chunks ${chunks}: positions ${at}..${at + n}`);
              at += n;
            }
            assert.equal(cache.length, seq.length);
            assert.throws(() => forward([[1]], cache), /exceed the cache's maxLength/);
          } finally {
            cache.dispose();
          }
        }
      });

      it('runs in float64 and bfloat16: the cache takes the model dtype', async function () {
        const m64 = GPT2LMHeadModel.fromSafetensors(path.join(DIR, 'tiny.safetensors'), expected.config, { device }).to({ dtype: 'float64' });
        const seq = [...expected.inputIds[0], ...expected.greedy.slice(0, 6)];
        const run = (m, rows, cache = null) => kd.inferenceMode(() => kd.tidy(() => m(ids64(rows).to(device), cache).cpu().dataSync()));
        const full = run(m64, [seq]);
        assert.ok(full instanceof Float64Array);
        const cache = kd.inferenceMode(() => m64.makeCache(1, seq.length));
        try {
          assert.equal(cache.kv[0].dtype, 'float64');
          const V = expected.config.vocabSize;
          const parts = [run(m64, [seq.slice(0, 8)], cache), ...seq.slice(8).map((t) => run(m64, [[t]], cache))];
          parts.forEach((p, i) => {
            const at = i === 0 ? 0 : 7 + i;
            assert.ok(maxDiff(p, full.subarray(at * V, at * V + p.length)) < 1e-10, `step ${i}`);
          });
        } finally {
          cache.dispose();
        }
        assert.ok(maxDiff(run(m64, expected.inputIds), expected.logits) < 1e-4);
        assert.deepEqual((await m64.generate(expected.inputIds[0], { maxNewTokens: 64 })).slice(8), expected.greedy);
        const m16 = m64.to({ dtype: 'bfloat16' });
        const out = await m16.generate(expected.inputIds[0], { maxNewTokens: 4, doSample: true, seed: 1 });
        assert.equal(out.length, 12);
      });

      it('decodes a batch of prompts as each prompt alone', async function () {
        const rows = expected.inputIds;
        const both = await model.generate(rows, { maxNewTokens: 10 });
        for (let b = 0; b < 2; b++) assert.deepEqual(both[b], await model.generate(rows[b], { maxNewTokens: 10 }));
        assert.deepEqual(both[0].slice(8), expected.greedy.slice(0, 10));
      });

      it('decodes prompts of different lengths (left-padded, masked) as each prompt alone', async function () {
        const rows = [expected.inputIds[0], expected.inputIds[1].slice(0, 5), expected.inputIds[1].slice(2, 3)];
        const all = await model.generate(rows, { maxNewTokens: 12 });
        for (let b = 0; b < rows.length; b++) assert.deepEqual(all[b], await model.generate(rows[b], { maxNewTokens: 12 }), `row ${b}`);
        assert.deepEqual(all[0].slice(8), expected.greedy.slice(0, 12));
        // the logits of a left-padded row equal the row's own
        const row = expected.inputIds[1].slice(0, 5);
        const got = kd.inferenceMode(() => kd.tidy(() => {
          const ids = kd.tensor([[0n, 0n, 0n, ...row.map(BigInt)]], { dtype: 'int64', device });
          const attentionMask = kd.tensor([[0, 0, 0, 1, 1, 1, 1, 1]], { device });
          return model(ids, null, { attentionMask }).narrow(1, 3, 5).cpu().dataSync();
        }));
        assert.ok(maxDiff(got, forward([row])) < 1e-4);
        assert.throws(() => kd.inferenceMode(() => model(ids64([row]), null, { attentionMask: kd.ones([1, 4]) })), /attentionMask must be/);
      });

      it('sampling is reproducible for a seed, and differs across seeds', async function () {
        const prompt = expected.inputIds[0];
        for (const o of [{ temperature: 0.9 }, { topK: 10 }, { topP: 0.8, temperature: 1.3 }, { topK: 20, topP: 0.9 }]) {
          const opts = { maxNewTokens: 24, doSample: true, seed: 7, ...o };
          const a = await model.generate(prompt, opts);
          const b = await model.generate(prompt, opts);
          assert.deepEqual(a, b);
          const c = await model.generate(prompt, { ...opts, seed: 8 });
          assert.notDeepEqual(a, c);
        }
        // topK = 1 is greedy
        const one = await model.generate(prompt, { maxNewTokens: 16, doSample: true, topK: 1, seed: 3 });
        assert.deepEqual(one.slice(8), expected.greedy.slice(0, 16));
      });

      it('streaming yields the same tokens as generate, and stops at eosTokenId', async function () {
        const prompt = expected.inputIds[0];
        for (const opts of [{ maxNewTokens: 20 }, { maxNewTokens: 20, doSample: true, seed: 11, topK: 30 }]) {
          const streamed = [];
          for await (const t of model.stream(prompt, opts)) streamed.push(t);
          assert.deepEqual(streamed, (await model.generate(prompt, opts)).slice(8));
        }
        const eos = expected.greedy[5];
        const first = expected.greedy.indexOf(eos);
        const out = await model.generate(prompt, { maxNewTokens: 30, eosTokenId: eos });
        assert.deepEqual(out.slice(8), expected.greedy.slice(0, first + 1));
        // leaving the loop early frees the cache
        for await (const t of model.stream(prompt, { maxNewTokens: 30 })) { assert.equal(t, expected.greedy[0]); break; }
      });
    });
  }

  describe('generate.js', function () {
    it('streams tokens from a small random model, and sampling options work', async function () {
      const { stdout } = await execFileP(process.execPath, [path.join(ROOT, 'examples', 'gpt2', 'generate.js'), '--tokens', '6']);
      const lines = stdout.trim().split('\n');
      assert.equal(lines[0], 'prompt: 1 2 3 4');
      assert.equal(lines[1].split(' ').length, 6);
      assert.match(lines[2], /^6 tokens in [\d.]+ s \([\d.]+ tokens\/s\)$/);
      const { main } = require('../examples/gpt2/generate');
      const sink = { text: '', write(s) { this.text += s; } };
      const a = await main(['--sample', '--top-k', '5', '--seed', '3', '--tokens', '5'], sink);
      const b = await main(['--sample', '--top-k', '5', '--seed', '3', '--tokens', '5'], sink);
      assert.equal(a.length, 5);
      assert.deepEqual(a, b);
    });

    it('--weights loads a Hugging Face checkpoint and decodes as PyTorch', async function () {
      const c = expected.config;
      const { stdout } = await execFileP(process.execPath, [path.join(ROOT, 'examples', 'gpt2', 'generate.js'),
        '--weights', path.join(DIR, 'tiny.safetensors'), '--vocab', String(c.vocabSize), '--positions', String(c.nPositions),
        '--width', String(c.nEmbd), '--layers', String(c.nLayer), '--heads', String(c.nHead),
        '--prompt', expected.inputIds[0].join(','), '--tokens', '10']);
      assert.equal(stdout.split('\n')[1], expected.greedy.slice(0, 10).join(' '));
    });

    it('--model loads a Hugging Face folder (config.json, model.safetensors)', async function () {
      const fs = require('node:fs');
      const os = require('node:os');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-gpt2-'));
      try {
        const c = expected.config;
        fs.copyFileSync(path.join(DIR, 'tiny.safetensors'), path.join(dir, 'model.safetensors'));
        const hf = { model_type: 'gpt2', activation_function: 'gelu_new', vocab_size: c.vocabSize, n_positions: c.nPositions,
          n_embd: c.nEmbd, n_layer: c.nLayer, n_head: c.nHead, n_inner: null, layer_norm_epsilon: 1e-5 };
        fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(hf));
        const { stdout } = await execFileP(process.execPath, [path.join(ROOT, 'examples', 'gpt2', 'generate.js'),
          '--model', dir, '--prompt', expected.inputIds[0].join(','), '--tokens', '6']);
        assert.equal(stdout.split('\n')[1], expected.greedy.slice(0, 6).join(' '));
        fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...hf, activation_function: 'relu' }));
        assert.throws(() => GPT2LMHeadModel.fromPretrained(dir), /unsupported activation_function="relu"/);
        assert.equal(configFromHuggingFace({ ...hf, n_inner: 4 * c.nEmbd }).nEmbd, c.nEmbd);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('fails with one line and exit status 1 on bad options', async function () {
      await assert.rejects(execFileP(process.execPath, [path.join(ROOT, 'examples', 'gpt2', 'generate.js'), '--tokens', '500']),
        (e) => e.code === 1 && /exceeds the model's nPositions=128/.test(e.stderr));
    });
  });

  describe('checks', function () {
    const model = new GPT2LMHeadModel({ vocabSize: 11, nPositions: 16, nEmbd: 8, nLayer: 1, nHead: 2 });

    it('rejects bad options and prompts with clear errors', async function () {
      const bad = async (ids, o, re) => assert.rejects(model.generate(ids, o), re);
      await bad([1, 2], { maxNewTokens: -1 }, /maxNewTokens/);
      await bad([1, 2], { maxNewTokens: 15 }, /exceeds the model's nPositions=16/);
      await bad([1, 2], { temperature: 0 }, /temperature/);
      await bad([1, 2], { topK: 1.5 }, /topK/);
      await bad([1, 2], { topP: 0 }, /topP/);
      await bad([1, 2], { doSample: 1 }, /doSample/);
      await bad([1, 2], { eosTokenId: 11 }, /eosTokenId/);
      await bad([1, 2], { seed: 'x' }, /seed/);
      await bad([1, 11], {}, /token id 11 is out of range/);
      await bad([], {}, /at least one token/);
      await bad([[1, 2], []], {}, /every row of inputIds must hold at least one token/);
      await bad('12', {}, /inputIds must be/);
      assert.deepEqual(await model.generate([4, 5], { maxNewTokens: 0 }), [4, 5]);
    });

    it('rejects configs and caches that do not fit', function () {
      assert.throws(() => new GPT2LMHeadModel({ nEmbd: 10, nHead: 3 }), /divisible/);
      assert.throws(() => new GPT2LMHeadModel({ nLayer: 0 }), /nLayer must be a positive integer/);
      assert.throws(() => new KVCache(model.config, 1, 17), /maxLength/);
      assert.throws(() => kd.inferenceMode(() => model(kd.zeros([1, 17], { dtype: 'int64' }))), /17 positions exceed nPositions=16/);
      const sd = model.stateDict();
      delete sd['transformer.ln_f.bias'];
      assert.throws(() => new GPT2LMHeadModel(model.config).loadHuggingFace(sd), /ln_f\.bias/);
    });

    it('loads GPT2LMHeadModel-style state dicts: transformer. prefix, lm_head.weight and mask buffers skipped', function () {
      const src = new GPT2LMHeadModel(model.config);
      const sd = { ...src.stateDict(), 'lm_head.weight': src.transformer.wte.weight, 'transformer.h.0.attn.bias': kd.ones([1, 1, 16, 16]) };
      const dst = new GPT2LMHeadModel(model.config).loadHuggingFace(sd);
      const ids = kd.tensor([[1n, 2n, 3n]]);
      const [a, b] = kd.inferenceMode(() => [src(ids).dataSync(), dst(ids).dataSync()]);
      assert.deepEqual(a, b);
      assert.throws(() => new GPT2LMHeadModel(model.config).loadHuggingFace({ ...sd, 'transformer.h.0.attn.c_attn.extra': kd.ones([1]) }), /Unexpected key/);
    });

    it('top-p keeps the smallest prefix reaching p', function () {
      const probs = Float32Array.from([0.5, 0.3, 0.15, 0.05]);
      const draws = (p) => new Set(Array.from({ length: 200 }, (_, i) => drawTopP(probs, p, () => (i + 0.5) / 200)));
      assert.deepEqual([...draws(0.5)], [0]);
      assert.deepEqual([...draws(0.79)].sort(), [0, 1]);
      assert.deepEqual([...draws(0.8)].sort(), [0, 1]);
      assert.deepEqual([...draws(1)].sort(), [0, 1, 2, 3]);
    });
  });
});
