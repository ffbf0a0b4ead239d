// bert.test.js - the BERT encoder of examples/bert against PyTorch 1.13 (test/fixtures/bert, written
// by tools/fixtures/bert.py from a plain-torch BertModel with Hugging Face's names): the
// checkpoint loads by name (the `bert.` prefix, gamma/beta LayerNorm names, position_ids and `cls.`
// entries), the last hidden state and the pooled output of a padded batch with token types match
// within 1e-4, and a padded row equals that row alone. On the CPU and, when present, on CUDA
// (KINDLING_CUDA=emulate runs the emulated GPU); also bad input.
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const kd = require('..');
const { BertModel, configFromHuggingFace } = require('../examples/bert/model');

const DIR = path.join(__dirname, 'fixtures', 'bert');
const expected = require(path.join(DIR, 'expected.json'));
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

describe('examples/bert', function () {
  this.timeout(120000);

  for (const device of devices) {
    describe(device, function () {
      let model;
      before(() => { model = BertModel.fromSafetensors(path.join(DIR, 'tiny.safetensors'), expected.config, { device }); });
      const long = (rows) => kd.tensor(rows.map((r) => r.map(BigInt)), { dtype: 'int64', device });
      const run = (ids, types, mask) => kd.inferenceMode(() => kd.tidy(() => {
        const o = model(long(ids), { tokenTypeIds: long(types), attentionMask: long(mask) });
        return [o.lastHiddenState.cpu().dataSync(), o.poolerOutput.cpu().dataSync()];
      }));

      it('matches PyTorch on a padded batch with token types within 1e-4', function () {
        const [h, p] = run(expected.inputIds, expected.tokenTypeIds, expected.attentionMask);
        assert.equal(h.length, expected.lastHiddenState.length);
        assert.ok(maxDiff(h, expected.lastHiddenState) < 1e-4, `hidden: max |diff| ${maxDiff(h, expected.lastHiddenState)}`);
        assert.ok(maxDiff(p, expected.poolerOutput) < 1e-4, `pooled: max |diff| ${maxDiff(p, expected.poolerOutput)}`);
      });

      it('a padded row equals the row alone', function () {
        const cut = (rows) => [rows[1].slice(0, 6)];
        const [h, p] = run(cut(expected.inputIds), cut(expected.tokenTypeIds), cut(expected.attentionMask));
        assert.ok(maxDiff(h, expected.row1Alone.lastHiddenState) < 1e-4);
        assert.ok(maxDiff(p, expected.row1Alone.poolerOutput) < 1e-4);
        const [hb] = run(expected.inputIds, expected.tokenTypeIds, expected.attentionMask);
        const H = expected.config.hiddenSize;
        assert.ok(maxDiff(hb.subarray(9 * H, 15 * H), h) < 1e-4);
      });

      it('defaults: no mask attends everywhere, token types default to 0', function () {
        const ids = [expected.inputIds[0]];
        const [h] = run(ids, [Array(9).fill(0)], [Array(9).fill(1)]);
        const got = kd.inferenceMode(() => kd.tidy(() => model(long(ids)).lastHiddenState.cpu().dataSync()));
        assert.ok(maxDiff(got, h) < 1e-6);
      });
    });
  }

  it('fromPretrained reads a Hugging Face folder (config.json, model.safetensors)', function () {
    const fs = require('node:fs');
    const os = require('node:os');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-bert-'));
    try {
      const c = expected.config;
      fs.copyFileSync(path.join(DIR, 'tiny.safetensors'), path.join(dir, 'model.safetensors'));
      const hf = { model_type: 'bert', hidden_act: 'gelu', position_embedding_type: 'absolute', vocab_size: c.vocabSize,
        hidden_size: c.hiddenSize, num_hidden_layers: c.numHiddenLayers, num_attention_heads: c.numAttentionHeads,
        intermediate_size: c.intermediateSize, max_position_embeddings: c.maxPositionEmbeddings, type_vocab_size: c.typeVocabSize,
        layer_norm_eps: 1e-12, hidden_dropout_prob: 0.1 };
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(hf));
      const model = BertModel.fromPretrained(dir);
      assert.deepEqual(model.config, { ...c, layerNormEps: 1e-12 });
      const p = kd.inferenceMode(() => model(kd.tensor(expected.inputIds.map((r) => r.map(BigInt))), {
        tokenTypeIds: kd.tensor(expected.tokenTypeIds.map((r) => r.map(BigInt))), attentionMask: kd.tensor(expected.attentionMask),
      }).poolerOutput.dataSync());
      assert.ok(maxDiff(p, expected.poolerOutput) < 1e-4);
      assert.throws(() => configFromHuggingFace({ ...hf, hidden_act: 'gelu_new' }), /unsupported hidden_act="gelu_new"/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad input and configs', function () {
    const model = new BertModel({ vocabSize: 10, hiddenSize: 8, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 16, maxPositionEmbeddings: 6 });
    const ids = kd.zeros([1, 4], { dtype: 'int64' });
    assert.throws(() => model(kd.zeros([4], { dtype: 'int64' })), /inputIds must be/);
    assert.throws(() => model(kd.zeros([1, 7], { dtype: 'int64' })), /exceeds maxPositionEmbeddings=6/);
    assert.throws(() => model(ids, { attentionMask: kd.ones([1, 3]) }), /attentionMask must be a tensor of inputIds' shape \[1, 4\]/);
    assert.throws(() => model(ids, { tokenTypeIds: kd.zeros([2, 4], { dtype: 'int64' }) }), /tokenTypeIds/);
    assert.throws(() => new BertModel({ hiddenSize: 10, numAttentionHeads: 3 }), /divisible/);
    const sd = model.stateDict();
    delete sd['pooler.dense.bias'];
    assert.throws(() => new BertModel(model.config).loadHuggingFace(sd), /pooler\.dense\.bias/);
  });
});
