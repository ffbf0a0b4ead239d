// examples_vision.test.js - smoke runs of examples/vision/classify.js: a small MobileNetV2 with
// torchvision's weights (the fixture of test/vision_models.test.js) classifies a PPM image the
// test writes, and its top-5 are the classes the same model gives in this process; a bad model
// name or a file that is not a PPM gives one error line, the usage and exit status 1; a small
// ViT-B/16 classifies at its own input size.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { kd, assert } = require('./helpers');
const vision = require('../examples/vision/models')(kd);

const ROOT = path.join(__dirname, '..');
const SCRIPT = path.join(ROOT, 'examples', 'vision', 'classify.js');
const WEIGHTS = path.join(__dirname, 'fixtures', 'vision', 'mobilenet_v2.safetensors');
const OPTIONS = { widthMult: 0.1, numClasses: 10 };

const run = (args) => new Promise((resolve) => {
  execFile(process.execPath, [SCRIPT, ...args], { cwd: ROOT }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
});

describe('examples/vision/classify.js', function () {
  this.timeout(60000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-vision-')); });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('prints the top-5 classes of a PPM image, as the model gives them', async function () {
    const [h, w] = [37, 53];
    const pixels = Buffer.alloc(h * w * 3);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 37 + (i % 7) * 11) & 255;
    const ppm = path.join(tmp, 'image.ppm');
    fs.writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n# a test image\n${w} ${h}\n255\n`), pixels]));
    const labels = path.join(tmp, 'labels.txt');
    fs.writeFileSync(labels, Array.from({ length: 10 }, (_, i) => `label-${i}`).join('\n') + '\n');

    const r = await run(['--model', 'mobilenet_v2', '--options', JSON.stringify(OPTIONS), '--weights', WEIGHTS, '--image', ppm, '--labels', labels]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0], /^mobilenet_v2: top-5 of .*image\.ppm \[3, 37, 53\]$/);
    const printed = lines.slice(1).map((l) => Number(l.trim().split(/\s+/)[1]));
    assert.equal(printed.length, 5);
    lines.slice(1).forEach((l, i) => assert.ok(l.endsWith(`label-${printed[i]}`), l));

    // the same image through the model here
    const model = vision.getModel('mobilenet_v2', OPTIONS).eval();
    model.loadStateDict(kd.loadSync(WEIGHTS));
    const expected = kd.tidy(() => kd.inferenceMode(() => {
      const img = kd.tensor(new Uint8Array(pixels), { dtype: 'uint8' }).reshape([h, w, 3]).permute([2, 0, 1]);
      const x = vision.transforms.imageClassification(img).unsqueeze(0);
      return kd.topk(model(x).squeeze(0), 5).indices.arraySync();
    }));
    assert.deepEqual(printed, expected);
  });

  it('classifies with a ViT at its own input size (a small ViT-B/16 with torchvision\'s weights)', async function () {
    const manifest = require('./fixtures/vision/manifest.json');
    const { options } = manifest.models.vit_b_16;
    const r = await run(['--model', 'vit_b_16', '--options', JSON.stringify(options), '--weights',
      path.join(__dirname, 'fixtures', 'vision', 'vit_b_16.safetensors'), '--top', '3']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0], /^vit_b_16: top-3 of a synthetic image/);
    assert.equal(lines.length, 4);
  });

  it('a wrong model name or a file that is not a PPM: one error line, the usage, exit status 1', async function () {
    const bad = await run(['--model', 'vgg16']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^classify: Unknown model "vgg16"/);
    assert.match(bad.stderr, /usage: node examples\/vision\/classify\.js/);
    const notPpm = path.join(tmp, 'x.ppm');
    fs.writeFileSync(notPpm, 'P3\n1 1\n255\n0 0 0\n');
    const r = await run(['--model', 'mobilenet_v2', '--options', JSON.stringify(OPTIONS), '--image', notPpm]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /only 8-bit binary PPM/);
  });
});
