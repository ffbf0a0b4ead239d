// pytorch_examples_helpers.js - what the parity tests of the ported pytorch/examples programs
// (test/pytorch_examples_*.test.js, examples/pytorch/<name>/) share: the LCG inputs that
// tools/fixtures/pytorch_examples/parity.py builds on the PyTorch side (bit-identical: integer
// steps and exact float32 values), loading a fixture's initial state dict into a model, comparing
// recorded quantities, and running an example program as a child process.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');
const { execFile } = require('node:child_process');
const kd = require('..');
// parity.py's lcg_tensor(seed, shape, lo, hi), the program's own copy (VGG-16's deterministic weights)
const { lcgTensor } = require('../examples/pytorch/fast_neural_style/neural_style/lcg');

const ROOT = path.join(__dirname, '..');
const DIR = path.join(__dirname, 'fixtures', 'pytorch_examples');

/** The fixture <name>.json and the tensors of <name>.safetensors. */
function loadFixture(name) {
  const expected = require(path.join(DIR, `${name}.json`));
  const file = path.join(DIR, `${name}.safetensors`);
  const tensors = fs.existsSync(file) ? kd.loadSync(file) : null; // fast_neural_style's weights are formulas
  return { expected, tensors };
}

/**
 * Copies the fixture tensors under `prefix` into model's state dict; every floating entry of the
 * model must be in the fixture (integer buffers such as num_batches_tracked start at 0 both sides).
 */
function loadInto(model, tensors, prefix = '') {
  const sd = {};
  for (const [k, v] of Object.entries(tensors)) if (k.startsWith(prefix)) sd[k.slice(prefix.length)] = v;
  const { missingKeys, unexpectedKeys } = model.loadStateDict(sd, { strict: false });
  assert.deepEqual(unexpectedKeys, []);
  assert.deepEqual(missingKeys.filter((k) => !k.endsWith('num_batches_tracked')), []);
}

/** Asserts |actual - expected| <= rtol * |expected| + atol for each key of each step. */
function assertSteps(actual, expected, { rtol, atol = 0 }) {
  assert.equal(actual.length, expected.length);
  actual.forEach((got, k) => {
    for (const key of Object.keys(expected[k])) {
      const a = got[key];
      const e = expected[k][key];
      assert.ok(Math.abs(a - e) <= rtol * Math.abs(e) + atol,
        `step ${k} ${key}: kindling ${a}, PyTorch ${e} (relative difference ${(Math.abs(a - e) / Math.abs(e)).toExponential(2)}, rtol ${rtol})`);
    }
  });
}

/** Runs `node <script> ...args` from the repository root; resolves {stdout, stderr, ms}. */
async function runExample(script, args, options = {}) {
  const t0 = Date.now();
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(ROOT, script), ...args],
    { cwd: ROOT, maxBuffer: 1 << 24, ...options });
  return { stdout, stderr, ms: Date.now() - t0 };
}

module.exports = { lcgTensor, loadFixture, loadInto, assertSteps, runExample, ROOT, DIR };
