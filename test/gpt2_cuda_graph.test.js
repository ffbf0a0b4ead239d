// gpt2_cuda_graph.test.js - decoding of examples/gpt2 with each token after the prompt one replay
// of a captured CUDA graph (examples/gpt2/graph_step.js, KVCache fixed-shape decoding): greedy
// tokens equal the eager path's and PyTorch's (test/fixtures/gpt2), batched rows, prompts of
// different lengths (left padding) and seeded sampling equal the eager path's, and on the emulated GPU every token after the first two is
// exactly one launch (a graph launch) with no host-to-device copy. Runs where CUDA is available
// (KINDLING_CUDA=emulate for the emulated GPU).
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const kd = require('..');
const { GPT2LMHeadModel } = require('../examples/gpt2/model');

const DIR = path.join(__dirname, 'fixtures', 'gpt2');
const expected = require(path.join(DIR, 'expected.json'));

describe('examples/gpt2 on CUDA: one graph launch per token', function () {
  if (!kd.cuda.isAvailable()) return;
  this.timeout(240000);
  const emulated = kd.cuda.emulator.isEnabled();
  let model;
  before(() => { model = GPT2LMHeadModel.fromSafetensors(path.join(DIR, 'tiny.safetensors'), expected.config, { device: 'cuda' }); });

  it('greedy decoding through the graph gives PyTorch\'s 64 tokens, as the eager path does', async function () {
    const prompt = expected.inputIds[0];
    const graphed = await model.generate(prompt, { maxNewTokens: 64 });
    const eager = await model.generate(prompt, { maxNewTokens: 64, cudaGraph: false });
    assert.deepEqual(graphed.slice(prompt.length), expected.greedy);
    assert.deepEqual(eager, graphed);
  });

  it('each token after the first two is one graph launch and no host-to-device copy', async function () {
    if (!emulated) this.skip(); // launch counts: the emulated GPU's
    const counts = [];
    let last = kd.cuda.emulator.stats();
    for await (const _ of model.stream(expected.inputIds[0], { maxNewTokens: 12 })) { // eslint-disable-line no-unused-vars
      const s = kd.cuda.emulator.stats();
      counts.push([s.launches - last.launches, s.graphLaunches - last.graphLaunches, s.copiesHostToDevice - last.copiesHostToDevice]);
      last = s;
    }
    assert.equal(counts.length, 12);
    // token 0: the prompt, eager; token 1: warm-up, capture and the first replay
    assert.ok(counts[0][0] > 10 && counts[0][1] === 0, `prompt: ${counts[0]}`);
    assert.equal(counts[1][1], 1);
    for (let i = 2; i < counts.length; i++) assert.deepEqual(counts[i], [1, 1, 0], `token ${i}: [launches, graph launches, h2d copies]`);
    // the eager path, for contrast: a launch per op
    let before = kd.cuda.emulator.stats();
    let i = 0;
    for await (const _ of model.stream(expected.inputIds[0], { maxNewTokens: 4, cudaGraph: false })) { // eslint-disable-line no-unused-vars
      const s = kd.cuda.emulator.stats();
      if (i++ > 0) assert.ok(s.launches - before.launches > 20 && s.graphLaunches === before.graphLaunches, `eager token: ${s.launches - before.launches}`);
      before = s;
    }
  });

  it('batched rows, padded rows and seeded sampling give the eager path\'s tokens', async function () {
    const rows = [expected.inputIds[0].slice(0, 5), expected.inputIds[1].slice(0, 5)];
    assert.deepEqual(await model.generate(rows, { maxNewTokens: 10 }), await model.generate(rows, { maxNewTokens: 10, cudaGraph: false }));
    // prompts of different lengths (left padding, masked): as eagerly, and as each row alone
    const ragged = [expected.inputIds[0].slice(0, 3), expected.inputIds[1].slice(0, 7)];
    const together = await model.generate(ragged, { maxNewTokens: 10 });
    assert.deepEqual(together, await model.generate(ragged, { maxNewTokens: 10, cudaGraph: false }));
    for (let b = 0; b < 2; b++) assert.deepEqual(together[b], await model.generate(ragged[b], { maxNewTokens: 10 }), `row ${b}`);
    for (const o of [{ topK: 30 }, { topP: 0.9, temperature: 0.8 }]) {
      const opts = { maxNewTokens: 12, doSample: true, seed: 5, ...o };
      assert.deepEqual(await model.generate(expected.inputIds[0], opts), await model.generate(expected.inputIds[0], { ...opts, cudaGraph: false }), JSON.stringify(o));
    }
  });

  it('generate.js decodes through the graph on CUDA, and --eager gives the same tokens', async function () {
    const { main } = require('../examples/gpt2/generate');
    const sink = { write() {} };
    const args = ['--device', 'cuda', '--tokens', '8'];
    const graphed = await main(args, sink);
    assert.equal(graphed.length, 8);
    assert.deepEqual(await main([...args, '--eager'], sink), graphed);
  });

  it('leaves no memory behind, and refuses a cudaGraph that is not a boolean', async function () {
    await model.generate(expected.inputIds[0], { maxNewTokens: 4 }); // the side stream and lazily made state
    const before = kd.cuda.memoryAllocated();
    await model.generate(expected.inputIds[0], { maxNewTokens: 8 });
    assert.equal(kd.cuda.memoryAllocated(), before);
    await assert.rejects(model.generate(expected.inputIds[0], { cudaGraph: 1 }), TypeError);
  });

  it('fixed-shape decoding refuses several tokens or an attention mask', function () {
    const cache = model.makeCache(1, 8);
    cache.beginFixedShapeDecoding();
    const ids = kd.tensor([[1n, 2n]], { dtype: 'int64', device: 'cuda' });
    assert.throws(() => kd.inferenceMode(() => model(ids, cache)), /fixed-shape decoding takes one token/);
    cache.dispose();
    ids.dispose();
  });
});
