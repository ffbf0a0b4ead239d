// vision_models.test.js - the torchvision model ports in examples/vision/models against
// torchvision 0.14: small-width instances of ResNet-18/50, MobileNetV2, MobileNetV3-Small/Large,
// EfficientNet-B0 and ViT-B/16 (image 32, patch 8, hidden 48, 2 layers) load torchvision's state dicts (test/fixtures/vision/*.safetensors, written
// by tools/fixtures/vision.py with random weights and BatchNorm statistics that matter) by name
// and give torchvision's logits in eval mode, on the CPU and, where kd.cuda.isAvailable() (the
// emulated GPU too), on CUDA; a forward leaves no tensor behind; the ImageNet transform matches
// torchvision's ImageClassification on a uint8 image; fuseConvBn (BatchNorm folded into the
// convolutions) keeps the logits. The full-size models: tools/vision_full.js.
'use strict';

const path = require('node:path');
const { kd, assert, collectGarbage } = require('./helpers');
const vision = require('../examples/vision/models')(kd);
const { roundHalfEven } = require('../examples/vision/models/transforms');

const DIR = path.join(__dirname, 'fixtures', 'vision');
const manifest = require(path.join(DIR, 'manifest.json'));
const TOL = 1e-4; // relative to the largest reference logit (at least 1): float32 through ~50 layers

/** max |a - b| / max(1, max |b|), with a on any device. */
function relErr(a, b) {
  return kd.tidy(() => a.cpu().sub(b).abs().max().item() / Math.max(1, b.abs().max().item()));
}

function loaded(name, device = 'cpu') {
  const m = manifest.models[name];
  const model = vision.getModel(m.arch, m.options).eval();
  const sd = kd.loadSync(path.join(DIR, `${name}.safetensors`));
  const result = model.loadStateDict(sd);
  for (const t of Object.values(sd)) t.dispose();
  if (device !== 'cpu') model.to(device);
  return { model, result, io: kd.loadSync(path.join(DIR, `${name}.io.safetensors`)) };
}

describe('vision models (torchvision 0.14 state dicts)', function () {
  this.timeout(60000);

  for (const name of Object.keys(manifest.models)) {
    describe(name, function () {
      it('has torchvision\'s state-dict names and shapes, and loads the checkpoint strictly', function () {
        const { model, result, io } = loaded(name);
        const sd = kd.loadSync(path.join(DIR, `${name}.safetensors`));
        const mine = model.stateDict();
        assert.deepEqual(Object.keys(mine).sort(), Object.keys(sd).sort());
        for (const [k, t] of Object.entries(mine)) assert.deepEqual(t.shape, sd[k].shape, k);
        assert.deepEqual(result, { missingKeys: [], unexpectedKeys: [] });
        for (const t of [...Object.values(sd), ...Object.values(io)]) t.dispose();
      });

      it('gives torchvision\'s logits in eval mode (CPU), and leaves no tensor behind', function () {
        const { model, io } = loaded(name);
        collectGarbage(); // earlier tests' garbage (twice: what the first collection's sweep frees can hold more)
        const before = collectGarbage().liveTensors;
        const y = kd.inferenceMode(() => model(io.input));
        assert.deepEqual(y.shape, io.logits.shape);
        const err = relErr(y, io.logits);
        assert.ok(err <= TOL, `${name}: max relative error ${err} > ${TOL}`);
        y.dispose();
        const after = collectGarbage().liveTensors;
        assert.ok(after <= before, `tensors left alive by one forward: ${after} > ${before}`);
      });

      it('is wrong with a wrong weight (the comparison can fail)', function () {
        const { model, io } = loaded(name);
        const params = [...model.namedParameters()];
        const [key, p] = params.find(([k]) => k.endsWith('.weight') && k.includes('.1.')) || params.find(([k]) => k.endsWith('mlp.0.weight'));
        kd.noGrad(() => p.mul_(1.5));
        const y = kd.inferenceMode(() => model(io.input));
        assert.ok(relErr(y, io.logits) > 10 * TOL, `scaling ${key} changed nothing`);
      });

      it('fuseConvBn folds every BatchNorm2d into its convolution and keeps the logits', function () {
        const { model, io } = loaded(name);
        const convs = [...model.modules()].filter((m) => m instanceof kd.nn.Conv2d).length;
        assert.strictEqual(vision.fuseConvBn(model), model);
        assert.equal([...model.modules()].filter((m) => m instanceof kd.nn.BatchNorm2d).length, 0);
        assert.equal([...model.modules()].filter((m) => m instanceof kd.nn.Conv2d && m.bias).length, convs);
        const y = kd.inferenceMode(() => model(io.input));
        const err = relErr(y, io.logits);
        assert.ok(err <= TOL, `${name} fused: max relative error ${err} > ${TOL}`);
      });

      it('gives the same logits on CUDA (first sample)', function () {
        if (!kd.cuda.isAvailable()) this.skip();
        const { model, io } = loaded(name, 'cuda');
        const x = io.input.narrow(0, 0, 1).to('cuda');
        const y = kd.inferenceMode(() => model(x));
        assert.ok(String(y.device).startsWith('cuda'), String(y.device));
        const err = relErr(y, io.logits.narrow(0, 0, 1));
        assert.ok(err <= TOL, `${name} on CUDA: max relative error ${err} > ${TOL}`);
      });
    });
  }

  it('a checkpoint of another architecture is refused with PyTorch\'s message', function () {
    const model = vision.getModel('resnet50', manifest.models.resnet50.options);
    const sd = kd.loadSync(path.join(DIR, 'resnet18.safetensors'));
    assert.throws(() => model.loadStateDict(sd), (e) => e.code === 'KD_INVALID_ARGUMENT' && /Missing key\(s\) in state_dict: .*"layer1.0.conv3.weight"/.test(e.message));
  });

  it('fuseConvBn refuses a model in training mode', function () {
    assert.throws(() => vision.fuseConvBn(vision.getModel('resnet18', { width: 4 })), /call model.eval\(\) first/);
  });

  it('getModel refuses an unknown name', function () {
    assert.throws(() => vision.getModel('vgg16'), RangeError);
  });

  describe('transforms.imageClassification (torchvision ImageClassification on a uint8 tensor)', function () {
    const p = kd.loadSync(path.join(DIR, 'preprocess.safetensors'));
    it('matches torchvision (bilinear rounding: at most one uint8 level on under 1% of values)', function () {
      const out = vision.transforms.imageClassification(p.image, manifest.preprocess);
      assert.deepEqual(out.shape, p.out.shape);
      const levels = out.sub(p.out).abs().mul(kd.tensor([0.229, 0.224, 0.225]).reshape([3, 1, 1])).mul(255);
      assert.ok(levels.max().item() < 1.0001, `off by ${levels.max().item()} levels`);
      assert.ok(levels.gt(0.01).sum().item() <= out.numel() / 100, 'too many values differ');
      const batched = vision.transforms.imageClassification(p.image.unsqueeze(0).expand([2, 3, ...p.image.shape.slice(1)]), manifest.preprocess);
      assert.deepEqual(batched.shape, [2, ...out.shape]);
      assert.equal(batched.narrow(0, 1, 1).squeeze(0).sub(out).abs().max().item(), 0);
    });
    it('resizes the shorter edge, crops the centre with Python\'s rounding, pads a small image', function () {
      assert.deepEqual(vision.transforms.resizedSize(480, 640, 256), [256, 341]);
      assert.deepEqual(vision.transforms.resizedSize(640, 480, 256), [341, 256]);
      assert.deepEqual([0.5, 1.5, 2.5, 2.4, 2.6].map(roundHalfEven), [0, 2, 2, 2, 3]);
      const img = kd.arange(0, 5 * 6).reshape([1, 5, 6]).to('uint8');
      assert.deepEqual(vision.transforms.centerCrop(img, 2).arraySync(), [[[14, 15], [20, 21]]]);
      const padded = vision.transforms.centerCrop(kd.ones([1, 2, 2], { dtype: 'uint8' }), 4).arraySync();
      assert.deepEqual(padded, [[[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]]);
    });
    it('refuses what is not an RGB uint8 image', function () {
      assert.throws(() => vision.transforms.imageClassification(kd.zeros([3, 8, 8])), TypeError);
      assert.throws(() => vision.transforms.imageClassification(kd.zeros([1, 8, 8], { dtype: 'uint8' })), RangeError);
      assert.throws(() => vision.transforms.imageClassification([1, 2, 3]), TypeError);
    });
  });
});
