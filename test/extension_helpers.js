// extension_helpers.js - for the extension test files: a fresh cache dir for kd.utils.cppExtension
// ($KINDLING_EXTENSIONS_DIR) for the enclosing describe, and the check that the example's op
// leaves no tensor behind on a device.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { kd, assert, collectGarbage } = require('./helpers');

/** Registers the describe's before/after hooks; returns { dir }, the dir while the describe's
 * tests run (made in its before hook, so a skipped describe makes none). */
function useFreshExtensionCache(prefix) {
  const cache = { dir: null };
  let saved;
  before(function () {
    cache.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    saved = process.env.KINDLING_EXTENSIONS_DIR;
    process.env.KINDLING_EXTENSIONS_DIR = cache.dir;
  });
  after(function () {
    if (saved === undefined) delete process.env.KINDLING_EXTENSIONS_DIR;
    else process.env.KINDLING_EXTENSIONS_DIR = saved;
    fs.rmSync(cache.dir, { recursive: true, force: true });
  });
  return cache;
}

/** Calls of the example's op (extdemo::scaled_tanh, loaded) with backward, disposed results and
 * refused calls on device leave the live tensor count (and the host bytes) where they were. */
function assertScaledTanhLeavesNothing(device) {
  const x = kd.randn([64, 32], { dtype: 'float64', device }).requiresGrad_();
  const ints = kd.ones([2], { dtype: 'int32', device });
  kd.tidy(() => kd.ops.extdemo.scaled_tanh(x, 2).sum().backward());
  const before = collectGarbage();
  for (let i = 0; i < 5; i++) {
    kd.tidy(() => kd.ops.extdemo.scaled_tanh(x, 2).sum().backward());
    kd.ops.extdemo.scaled_tanh(x, 2).dispose();
    assert.throws(() => kd.ops.extdemo.scaled_tanh(ints));
    // a fresh input each call: what the node saved goes with the graph, not with the GC
    kd.tidy(() => kd.ops.extdemo.scaled_tanh(kd.randn([64, 32], { dtype: 'float64', device }).requiresGrad_(), 2).sum().backward());
    const fresh = kd.randn([64, 32], { dtype: 'float64', device }).requiresGrad_();
    kd.ops.extdemo.scaled_tanh(fresh, 2).dispose();
    fresh.dispose();
  }
  const after = kd.memory();
  assert.equal(after.liveTensors, before.liveTensors);
  assert.equal(after.hostBytesInUse, before.hostBytesInUse);
}

module.exports = { useFreshExtensionCache, assertScaledTanhLeavesNothing };
