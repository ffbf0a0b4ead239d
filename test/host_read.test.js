// host_read.test.js - reading a tensor's values on the host (dataSync, dataAsync, item): every dtype
// through the small-tensor path (at most 8 elements, Note [Reading small tensors] in
// src/napi/tensor.c) and the general one, views, copies that do not alias, worker threads.
'use strict';

const { Worker } = require('node:worker_threads');
const path = require('node:path');
const { kd, assert } = require('./helpers');

const DTYPES = {
  float32: Float32Array, float64: Float64Array, float16: Float32Array, bfloat16: Float32Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};

describe('host reads', function () {
  for (const [dtype, Ctor] of Object.entries(DTYPES)) {
    it(`${dtype}: 0, 1, 8 and 9 elements give ${Ctor.name} with the values`, async function () {
      for (const n of [0, 1, 8, 9]) {
        const values = Array.from({ length: n }, (_, i) => (dtype === 'bool' ? i % 2 : (i % 5) - 2 * (dtype.startsWith('uint') || dtype === 'bool' ? 0 : 1)));
        const t = kd.tensor(values, { dtype });
        const expect = values.map((v) => (Ctor === BigInt64Array ? BigInt(v) : v));
        for (const got of [t.dataSync(), await t.dataAsync()]) {
          assert.ok(got instanceof Ctor, `${n} elements: ${got.constructor.name}`);
          assert.deepEqual(Array.from(got), expect, `${n} elements`);
        }
        t.dispose();
      }
    });
  }

  it('float16 and bfloat16 values are widened exactly; float32 keeps its rounding', function () {
    assert.deepEqual(Array.from(kd.tensor([1 / 3, 65504], { dtype: 'float16' }).dataSync()), [0.333251953125, 65504]);
    assert.deepEqual(Array.from(kd.tensor([1 / 3], { dtype: 'bfloat16' }).dataSync()), [0.333984375]);
    assert.deepEqual(Array.from(kd.tensor([0.1]).dataSync()), [Math.fround(0.1)]);
    assert.equal(kd.tensor([2n ** 62n + 1n], { dtype: 'int64' }).dataSync()[0], 2n ** 62n + 1n);
  });

  it('a small view (transposed, offset, expanded) reads its own elements in row-major order', function () {
    const base = kd.arange(12, { dtype: 'float32' }).reshape([3, 4]);
    assert.deepEqual(Array.from(base.narrow(0, 1, 2).narrow(1, 1, 2).t().dataSync()), [5, 9, 6, 10]);
    assert.deepEqual(Array.from(kd.tensor([7], { dtype: 'float32' }).expand([5]).dataSync()), [7, 7, 7, 7, 7]);
  });

  it('each read is a copy: later writes and reads do not change it', function () {
    const t = kd.tensor([1, 2], { dtype: 'float32' });
    const a = t.dataSync();
    t.add_(1);
    const b = kd.tensor([9, 9, 9], { dtype: 'float32' }).dataSync();
    assert.deepEqual(Array.from(a), [1, 2]);
    assert.deepEqual(Array.from(b), [9, 9, 9]);
    assert.deepEqual(Array.from(t.dataSync()), [2, 3]);
    a[0] = 100;
    assert.deepEqual(Array.from(t.dataSync()), [2, 3]);
  });

  it('a disposed tensor is an error (data() rejects)', async function () {
    const t = kd.tensor([1]);
    t.dispose();
    assert.throws(() => t.dataSync(), (e) => e.code === 'KD_DISPOSED');
    await assert.rejects(t.dataAsync(), (e) => e.code === 'KD_DISPOSED');
  });

  it('worker threads read small tensors through their own buffer', async function () {
    const src = `
      const { parentPort } = require('node:worker_threads');
      const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      const out = [];
      for (let i = 0; i < 200; i++) out.push(kd.tensor([i, -i], { dtype: 'float64' }).dataSync()[1]);
      parentPort.postMessage(out);`;
    const runs = [0, 1].map(() => new Promise((resolve, reject) => {
      const w = new Worker(src, { eval: true });
      w.once('message', resolve);
      w.once('error', reject);
    }));
    const here = [];
    for (let i = 0; i < 200; i++) here.push(kd.tensor([i, 2 * i], { dtype: 'float32' }).dataSync()[1]);
    for (const r of await Promise.all(runs)) assert.deepEqual(r, Array.from({ length: 200 }, (_, i) => -i));
    assert.deepEqual(here, Array.from({ length: 200 }, (_, i) => 2 * i));
  });
});
