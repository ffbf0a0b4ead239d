// bench_load.test.js - the benchmark's load rule and passive OpenMP peers (bench/lib/load.js,
// Note [Loaded runs] and Note [Passive OpenMP peers]): which runs count as loaded, that the table
// marks their ratios and says so next to it, and the environment the OpenMP peers get.
'use strict';

const assert = require('node:assert/strict');
const { isLoaded, loadSpan, formatLoad, passiveOpenMP, readLoad } = require('../bench/lib/load');
const { formatTable, formatHeadlines, LOADED_MARK } = require('../bench/lib/format');

describe('bench: load next to every table', function () {
  it('a run is loaded when a reading exceeds the thread count + 0.5', function () {
    assert.equal(isLoaded(2, 1.9, 2.4), false);
    assert.equal(isLoaded(2, 1.9, 2.6), true);
    assert.equal(isLoaded(2, 7.4, null), true);
    assert.equal(isLoaded(4, 4.3), false);
    assert.equal(isLoaded(2, null, undefined), false); // no readings (no load average on this OS)
    assert.equal(typeof readLoad() === 'number' || readLoad() === null, true);
  });

  it('the line says the readings, the rule and the verdict', function () {
    const quiet = formatLoad(loadSpan(2, 1.9, 2.1), 2, LOADED_MARK);
    assert.match(quiet, /1\.90 before, 2\.10 after \(loaded above 2\.5 = 2 bench threads \+ 0\.5\): quiet/);
    const loaded = formatLoad(loadSpan(2, 1.2, 7.55), 2, LOADED_MARK);
    assert.match(loaded, /7\.55 after .*LOADED.*marked ~/);
    assert.match(formatLoad(loadSpan(1, 0.5, undefined), 1), /0\.50 before starting \(loaded above 1\.5 = 1 bench thread \+ 0\.5\)/);
  });

  it('ratios of rows measured while loaded are marked, in the table and the headlines', function () {
    const row = (loaded) => ({ case: 'matmul', size: '64x64', kindling_s: 2e-5, torch_s: 4e-5, tfjs_s: null, native_s: null,
      kindling_rate: null, rate_unit: null, limit: null, limit_pct: null, stream_add_pct: null, in_cache: true,
      headline: true, title: 'mm', unit: null, loaded });
    const table = formatTable([row(false), row(true)], false).split('\n');
    assert.match(table[2], / 0\.50x /);
    assert.match(table[3], / ~0\.50x /);
    assert.match(formatHeadlines([row(true)])[0], /kindling\/PyTorch ~0\.50x/);
  });

  it('OpenMP peers wait passively unless the caller chose a policy', function () {
    assert.equal(passiveOpenMP({ OMP_NUM_THREADS: '2' }).OMP_WAIT_POLICY, 'PASSIVE');
    assert.equal(passiveOpenMP({ OMP_WAIT_POLICY: 'ACTIVE' }).OMP_WAIT_POLICY, 'ACTIVE');
  });
});
