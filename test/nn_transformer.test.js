// nn_transformer.test.js - kd.nn.Transformer, TransformerEncoder, TransformerDecoder and
// TransformerDecoderLayer. Parity with PyTorch (test/fixtures/transformer, written by
// tools/fixtures/transformer.py in the ModuleInfo harness's format): the module built with the
// sample's arguments loads PyTorch's state dict (strictly: the names must be PyTorch's) and must
// reproduce the outputs and the gradients of the inputs and every parameter, float32 and float64,
// on the CPU and on CUDA when available, and TransformerEncoder's outputs in inference where
// PyTorch runs it on nested tensors (Note [Nested-tensor inference]). Then the layer stacks are independent deep copies,
// generateSquareSubsequentMask, initialisation and PyTorch's errors.
'use strict';

const path = require('node:path');

const { kd, assert } = require('./helpers');
const { loadAll, runModuleSample } = require('./moduleinfo_helpers');

const nn = kd.nn;
const docs = loadAll(path.join(__dirname, 'fixtures', 'transformer'));
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];

describe('kd.nn Transformer family vs PyTorch (same weights, inputs, gradients)', function () {
  it('has the recorded fixtures', function () {
    assert.deepStrictEqual(docs.map((d) => d.module), ['Transformer', 'TransformerDecoder', 'TransformerDecoderLayer', 'TransformerEncoder', 'TransformerEncoder']);
    assert.ok(docs[3].samples.every((s) => s.noGrad) && docs[4].samples.every((s) => s.grads), 'inference samples, then the others');
  });
  for (const device of devices) {
    for (const doc of docs) {
      describe(`${doc.module}${doc.samples[0].noGrad ? ' in inference (eval, no autograd: PyTorch\'s nested tensors)' : ''} on ${device}`, function () {
        for (const s of doc.samples) {
          it(`${s.id}: ${s.desc}`, function () {
            const r = kd.tidy(() => runModuleSample(doc, s, device));
            assert.strictEqual(r.forward, null, r.forward);
            assert.strictEqual(r.grad, s.noGrad ? undefined : null, r.grad);
          });
        }
      });
    }
  }
});

describe('kd.nn Transformer family: structure and errors', function () {
  const small = { dModel: 8, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 1, dimFeedforward: 16, dropout: 0 };

  it('has PyTorch\'s state-dict names', function () {
    const keys = Object.keys(new nn.Transformer(small).stateDict());
    assert.strictEqual(keys.length, 2 * 12 + 2 + 1 * 18 + 2);
    for (const k of ['encoder.layers.1.self_attn.in_proj_weight', 'encoder.layers.0.linear2.bias', 'encoder.norm.weight',
      'decoder.layers.0.multihead_attn.out_proj.weight', 'decoder.layers.0.norm3.bias', 'decoder.norm.bias']) {
      assert.ok(keys.includes(k), k);
    }
  });

  it('stacks independent deep copies of the layer it is given', function () {
    const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0 });
    const enc = new nn.TransformerEncoder(layer, 2);
    const [a, b] = [enc.layers.at(0), enc.layers.at(1)];
    assert.ok(a !== layer && b !== layer && a !== b);
    assert.ok(a instanceof nn.TransformerEncoderLayer);
    assert.deepStrictEqual(a.linear1.weight.arraySync(), layer.linear1.weight.arraySync());
    kd.noGrad(() => a.linear1.weight.fill_(3));
    assert.notStrictEqual(b.linear1.weight.arraySync()[0][0], 3);
    assert.notStrictEqual(layer.linear1.weight.arraySync()[0][0], 3);
    assert.ok(a.linear1.weight.requiresGrad);
    assert.strictEqual(enc.parameters().length, 2 * layer.parameters().length);
    assert.strictEqual(enc.norm, null);
    const dec = new nn.TransformerDecoder(new nn.TransformerDecoderLayer(8, 2, 16, 0), 3, new nn.LayerNorm(8));
    assert.strictEqual(dec.layers.length, 3);
    assert.ok(dec.norm instanceof nn.LayerNorm);
  });

  it('copies any layer deeply: buffers (and whether they persist), shared submodules once, hooks, plain values', function () {
    class Layer extends nn.Module {
      constructor() {
        super();
        this.fc = new nn.Linear(2, 2);
        this.alias = this.fc;
        this.registerBuffer('count', kd.zeros([1]));
        this.registerBuffer('scratch', kd.ones([2]), { persistent: false });
        this.registerParameter('gate', null);
        this.scale = 2;
        this.sizes = [1, 2];
      }
      forward(x) { return this.fc(x).mul(this.scale); }
    }
    const layer = new Layer();
    const seen = [];
    layer.registerForwardHook(() => { seen.push('hook'); });
    const [c] = new nn.TransformerEncoder(layer, 1).layers;
    assert.ok(c instanceof Layer && c !== layer);
    assert.strictEqual(c.alias, c.fc);
    assert.notStrictEqual(c.fc, layer.fc);
    assert.notStrictEqual(c.count, layer.count);
    assert.deepStrictEqual(Object.keys(c.stateDict()), Object.keys(layer.stateDict()));
    assert.deepStrictEqual(c.scratch.arraySync(), [1, 1]);
    assert.strictEqual(c.gate, null);
    assert.strictEqual(c.scale, 2);
    assert.ok(c.sizes !== layer.sizes && c.sizes[1] === 2);
    c(kd.zeros(1, 2));
    assert.deepStrictEqual(seen, ['hook']);
    kd.noGrad(() => c.count.add_(1));
    assert.deepStrictEqual(layer.count.arraySync(), [0]);
    assert.strictEqual(new nn.TransformerEncoder(layer.eval(), 1).layers.at(0).training, false);
  });

  it('generateSquareSubsequentMask: -Infinity above the diagonal', function () {
    const m = nn.Transformer.generateSquareSubsequentMask(3);
    assert.strictEqual(m.dtype, 'float32');
    assert.deepStrictEqual(m.arraySync(), [[0, -Infinity, -Infinity], [0, 0, -Infinity], [0, 0, 0]]);
    assert.strictEqual(nn.Transformer.generateSquareSubsequentMask(2, { dtype: 'float64' }).dtype, 'float64');
    assert.deepStrictEqual(nn.Transformer.generateSquareSubsequentMask(0).shape, [0, 0]);
  });

  it('initialises every matrix with xavierUniform_', function () {
    kd.manualSeed(0);
    const t = new nn.Transformer(small);
    const w = t.decoder.layers.at(0).linear1.weight; // [16, 8]
    const bound = Math.sqrt(6 / (16 + 8));
    const v = w.flatten().arraySync();
    assert.ok(v.every((x) => Math.abs(x) <= bound) && Math.max(...v.map(Math.abs)) > 0.8 * bound);
  });

  it('a causal decoder sees no later position', function () {
    kd.manualSeed(1);
    const t = new nn.Transformer(small).eval();
    const src = kd.randn(5, 1, 8);
    const tgt = kd.randn(4, 1, 8);
    const mask = nn.Transformer.generateSquareSubsequentMask(4);
    const y = t(src, tgt, { tgtMask: mask });
    const tgt2 = tgt.clone();
    kd.noGrad(() => tgt2.select(0, 3).fill_(7));
    const y2 = t(src, tgt2, { tgtMask: mask });
    assert.deepStrictEqual(y.narrow(0, 0, 3).arraySync(), y2.narrow(0, 0, 3).arraySync());
    assert.notDeepStrictEqual(y.select(0, 3).arraySync(), y2.select(0, 3).arraySync());
  });

  it('tgtIsCausal stands for the causal mask', function () {
    kd.manualSeed(2);
    const t = new nn.Transformer(small).eval();
    const src = kd.randn(5, 1, 8);
    const tgt = kd.randn(4, 1, 8);
    const masked = t(src, tgt, { tgtMask: nn.Transformer.generateSquareSubsequentMask(4) }).arraySync();
    assert.deepStrictEqual(t(src, tgt, { tgtIsCausal: true }).arraySync(), masked);
    assert.notDeepStrictEqual(t(src, tgt).arraySync(), masked);
  });

  it('checks its arguments as PyTorch does', function () {
    const t = new nn.Transformer(small);
    assert.throws(() => t(kd.zeros(5, 2, 8), kd.zeros(4, 3, 8)), { code: 'KD_SHAPE_MISMATCH', message: /the batch number of src and tgt must be equal/ });
    assert.throws(() => t(kd.zeros(5, 2, 8), kd.zeros(4, 2, 6)), { code: 'KD_SHAPE_MISMATCH', message: /feature number of src and tgt must be equal to d_model/ });
    assert.throws(() => new nn.TransformerDecoderLayer(8, 2, { activation: 'tanh' }), { code: 'KD_INVALID_ARGUMENT', message: /activation should be relu\/gelu, not tanh/ });
    const enc = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, 16, 0), 1);
    assert.throws(() => enc(kd.zeros(3, 2, 8), { srcKeyPaddingMask: kd.zeros([2, 3], { dtype: 'int64' }) }),
      { code: 'KD_DTYPE_MISMATCH', message: /only bool and floating types of key_padding_mask are supported/ });
    assert.throws(() => new nn.TransformerEncoder(new nn.Linear(2, 2), -1), { code: 'KD_INVALID_ARGUMENT' });
    assert.throws(() => new nn.TransformerDecoder({}, 2), TypeError);
    assert.throws(() => nn.Transformer.generateSquareSubsequentMask(-1), { code: 'KD_INVALID_ARGUMENT' });
  });

  it('a custom encoder and decoder are used as given', function () {
    const encoder = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, 16, 0), 1);
    const decoder = new nn.TransformerDecoder(new nn.TransformerDecoderLayer(8, 2, 16, 0), 1);
    const t = new nn.Transformer({ ...small, customEncoder: encoder, customDecoder: decoder });
    assert.strictEqual(t.encoder, encoder);
    assert.strictEqual(t.decoder, decoder);
    assert.deepStrictEqual(t(kd.zeros(3, 2, 8), kd.zeros(2, 2, 8)).shape, [2, 2, 8]);
  });
});
