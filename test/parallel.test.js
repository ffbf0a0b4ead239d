// parallel.test.js - CPU kernels split work across threads (kd.setNumThreads): results must not
// depend on the thread count (large, non-contiguous, broadcasting inputs; reductions along
// each dim; matmul; dtype conversions), and odd thread counts must work.
'use strict';

const { kd, assert, values, expectKdError } = require('./helpers');

function workload() {
  return kd.tidy(() => {
    kd.manualSeed(99);
    const a = kd.randn([257, 389], { dtype: 'float64' });
    const b = kd.randn([389, 1], { dtype: 'float64' });
    const at = a.t(); // [389, 257], non-contiguous
    const out = {
      pointwise: values(at.mul(b).add(at.sigmoid()).sub(b.exp(), { alpha: 0.5 })),
      slicedInt: values(kd.arange(200000, { dtype: 'int32' }).slice(0, 1, 200000, 3).mul(7).sub(11)),
      sum0: values(at.sum(0)),
      sum1: values(at.sum(1)),
      sumAll: values(a.sum()),
      mean: values(a.mean([0, 1])),
      max1: values(a.max(1).values),
      argmax0: values(at.argmax(0)),
      matmul: values(at.matmul(a)),
      bmm: values(kd.randn([7, 33, 65]).bmm(kd.randn([7, 65, 17]))),
      toF16: values(at.to('float16')),
      toI32: values(at.mul(100).to('int32')),
      cmp: values(at.gt(0)),
      where: values(kd.where(at.gt(0), at, b)),
      contiguous: values(at.contiguous()),
      f32sum: values(kd.ones([1 << 20]).mul(0.1).sum()),
    };
    return out;
  });
}

describe('parallel CPU kernels', function () {
  let threads0;
  before(function () { threads0 = kd.getNumThreads(); });
  after(function () { kd.setNumThreads(threads0); });

  it('results do not depend on the thread count', function () {
    kd.setNumThreads(1);
    const ref = workload();
    for (const n of [2, 3, 7, 16]) {
      kd.setNumThreads(n);
      assert.equal(kd.getNumThreads(), n);
      const got = workload();
      for (const k of Object.keys(ref)) {
        assert.equal(got[k].length, ref[k].length, `${k} with ${n} threads: length`);
        const bad = ref[k].findIndex((x, i) => {
          const y = got[k][i];
          if (typeof x !== 'number') return x !== y;
          if (Number.isNaN(x)) return !Number.isNaN(y);
          return Math.abs(x - y) > 1e-9 * Math.max(1, Math.abs(x)) + (k === 'f32sum' || k === 'bmm' ? 1e-3 : 0);
        });
        assert.equal(bad, -1, `${k} with ${n} threads differs at ${bad}: ${got[k][bad]} vs ${ref[k][bad]}`);
      }
    }
  });

  it('a single thread still gives correct values', function () {
    kd.setNumThreads(1);
    const x = kd.arange(100000, { dtype: 'float64' });
    assert.equal(x.sum().item(), (99999 * 100000) / 2);
    assert.equal(x.reshape([1000, 100]).t().sum(1).dataSync()[0], (999 * 1000) / 2 * 100);
  });

  it('setNumThreads validates its argument', function () {
    expectKdError(() => kd.setNumThreads(0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.setNumThreads(1.5), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.setNumThreads(), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    kd.setNumThreads(3);
    assert.equal(kd.getNumThreads(), 3);
  });
});

// The pool's workers spin for KINDLING_SPIN_US before sleeping (src/core/parallel.c, Note
// [Thread pool: spin, then sleep]): every job must run each chunk exactly once whether the
// workers are awake, asleep, or in between. Child processes, because the budget is read once.
describe('parallel pool wake-up paths', function () {
  this.timeout(60000);
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const kd = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    kd.setNumThreads(+process.env.T);
    const x = kd.arange(100003, { dtype: 'int64' });
    const want = 100002 * 100003 / 2;
    for (let i = 0; i < 3000; i++) {
      const s = x.sum();
      const v = s.item();
      s.dispose();
      if (v !== want) { console.log('bad sum ' + v + ' at ' + i); process.exit(1); }
      if (i % 500 === 0) { const t = Date.now() + 2; while (Date.now() < t); } // let workers fall asleep
    }
    console.log('ok');`;
  for (const [spin, threads] of [['0', 2], ['1', 3], ['200', 2], ['100000', 4]]) {
    it(`KINDLING_SPIN_US=${spin}, ${threads} threads: every chunk runs once`, function () {
      const r = spawnSync(process.execPath, ['-e', script], {
        env: { ...process.env, KINDLING_SPIN_US: spin, T: String(threads) }, encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /ok/);
    });
  }
});
