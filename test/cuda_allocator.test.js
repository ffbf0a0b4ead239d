// cuda_allocator.test.js - the CUDA caching allocator's policy, on the CPU: the allocator core
// (cuda/caching_allocator_core.c) runs on a fake device (src/cuda_bridge/alloc_fake.c) whose
// addresses have no memory behind them and whose stream events complete when the test says.
// Checks rounding, the small/large pools, splitting, coalescing, best fit, per-stream reuse and
// recordStream, free-and-retry on OOM, the OOM message, memory fraction, max_split_size_mb,
// KINDLING_CUDA_ALLOC_CONF parsing and the statistics.
'use strict';

const { kd, assert } = require('./helpers');

const { FakeAllocator } = kd.cuda._testing;
const KiB = 1024;
const MiB = 1024 * 1024;

function expectCode(fn, code, re) {
  let err;
  try { fn(); } catch (e) { err = e; }
  assert.ok(err, `expected a ${code} error`);
  assert.equal(err.code, code, err.message);
  if (re) assert.match(err.message, re);
  return err;
}

describe('cuda caching allocator (fake device, no GPU needed)', function () {
  it('rounds to 512 bytes and serves small requests from one 2 MiB segment', function () {
    const a = new FakeAllocator();
    const p = a.malloc(1);
    const q = a.malloc(1000);
    const s = a.stats();
    assert.equal(s['allocated_bytes.all.current'], 512 + 1024);
    assert.equal(s['requested_bytes.all.current'], 1001);
    assert.equal(s['reserved_bytes.all.current'], 2 * MiB);
    assert.equal(s['reserved_bytes.small_pool.current'], 2 * MiB);
    assert.equal(s['reserved_bytes.large_pool.current'], 0);
    assert.equal(s['segment.all.current'], 1);
    assert.equal(s['allocation.all.current'], 2);
    assert.equal(q, p + 512, 'the second block is split off right after the first');
    assert.equal(a.device().mallocs, 1);
    assert.equal(a.malloc(0), 0, 'zero bytes is a null pointer');
  });

  it('coalesces free neighbours back into one block', function () {
    const a = new FakeAllocator();
    const p = a.malloc(512);
    const q = a.malloc(512);
    const r = a.malloc(512);
    a.free(q);
    let snap = a.snapshot();
    assert.equal(snap.length, 1);
    assert.deepEqual(snap[0].blocks.map((b) => b.state),
      ['active_allocated', 'inactive', 'active_allocated', 'inactive']);
    assert.equal(a.stats()['inactive_split.all.current'], 2);
    a.free(p);
    a.free(r);
    snap = a.snapshot();
    assert.equal(snap[0].blocks.length, 1, 'every block merged');
    assert.equal(snap[0].blocks[0].size, 2 * MiB);
    assert.equal(snap[0].segmentType, 'small');
    const s = a.stats();
    assert.equal(s['inactive_split.all.current'], 0);
    assert.equal(s['inactive_split_bytes.all.current'], 0);
    assert.equal(s['active_bytes.all.current'], 0);
    assert.equal(s['allocated_bytes.all.current'], 0);
    assert.equal(s['reserved_bytes.all.current'], 2 * MiB, 'memory stays cached');
    // reuse: same address, no new device allocation
    assert.equal(a.malloc(100), p);
    assert.equal(a.device().mallocs, 1);
  });

  it('large pool: 20 MiB segments for 1-10 MiB, own rounded segments from 10 MiB, best fit', function () {
    const a = new FakeAllocator();
    const x = a.malloc(3 * MiB);
    let s = a.stats();
    assert.equal(s['reserved_bytes.large_pool.current'], 20 * MiB);
    assert.equal(s['inactive_split_bytes.large_pool.current'], 17 * MiB);
    const y = a.malloc(5 * MiB); // from the 17 MiB remainder
    assert.equal(y, x + 3 * MiB);
    assert.equal(a.device().mallocs, 1);
    const z = a.malloc(13 * MiB + 1); // the 12 MiB remainder cannot hold it: new segment of 14 MiB (2 MiB rounding)
    s = a.stats();
    assert.equal(a.device().mallocs, 2);
    assert.equal(s['reserved_bytes.all.current'], 20 * MiB + 14 * MiB);

    // a large remainder below 1 MiB is not split off
    const snap = a.snapshot().find((g) => g.address === z);
    assert.equal(snap.totalSize, 14 * MiB);
    assert.equal(snap.blocks.length, 1, 'a large-pool remainder of 1 MiB or less is not split off');
    assert.equal(a.stats()['allocated_bytes.all.current'], 3 * MiB + 5 * MiB + 14 * MiB);
    // best fit: after freeing, a 4 MiB request takes the smaller of two candidate holes
    a.free(x); // 3 MiB hole at the start of segment 1
    const w = a.malloc(2 * MiB);
    assert.equal(w, x, 'the 3 MiB hole is the best fit for 2 MiB');
  });

  it('blocks are reused only on the stream they were allocated on', function () {
    const a = new FakeAllocator();
    const p = a.malloc(4096, 1);
    a.free(p);
    const q = a.malloc(4096, 2);
    assert.notEqual(q, p);
    assert.equal(a.device().mallocs, 2, 'stream 2 gets its own segment');
    assert.equal(a.malloc(4096, 1), p, 'stream 1 reuses its block');
  });

  it('recordStream: a freed block waits for the other stream before reuse', function () {
    const a = new FakeAllocator();
    const p = a.malloc(1000, 1);
    a.recordStream(p, 2);
    a.recordStream(p, 2); // twice is once
    a.recordStream(p, 1); // the allocation stream itself is ignored
    a.free(p);
    let s = a.stats();
    assert.equal(s['allocated_bytes.all.current'], 0);
    assert.equal(s['active_bytes.all.current'], 1024, 'still active until stream 2 is done');
    assert.equal(a.device().eventsRecorded, 1);
    assert.equal(a.snapshot()[0].blocks[0].state, 'active_pending_free');
    const q = a.malloc(1000, 1);
    assert.notEqual(q, p, 'not reused while the event is pending');
    assert.equal(a.processEvents(), 1);
    a.completeEvents();
    assert.equal(a.processEvents(), 0);
    s = a.stats();
    assert.equal(s['active_bytes.all.current'], 1024);
    assert.equal(a.device().liveEvents, 0);
    a.free(q);
    assert.equal(a.malloc(1000, 1), p, 'reused after the event completed');
  });

  it('emptyCache waits for pending events and releases every free segment', function () {
    const a = new FakeAllocator();
    const p = a.malloc(30 * MiB);
    const q = a.malloc(100);
    const r = a.malloc(100, 7);
    a.recordStream(r, 8);
    a.free(p);
    a.free(r);
    a.emptyCache();
    const s = a.stats();
    assert.equal(s['reserved_bytes.all.current'], 2 * MiB, 'only the segment holding q is left');
    assert.equal(a.device().used, 2 * MiB);
    assert.equal(a.device().liveEvents, 0);
    a.free(q);
    a.emptyCache();
    assert.equal(a.stats()['reserved_bytes.all.current'], 0);
    assert.equal(a.device().used, 0);
    assert.equal(a.stats()['segment.all.current'], 0);
  });

  it('out of memory: frees the cache and retries, then KD_CUDA_OOM with a summary', function () {
    const a = new FakeAllocator({ capacity: 64 * MiB });
    const p = a.malloc(30 * MiB);
    a.free(p); // cached
    const q = a.malloc(40 * MiB); // does not fit next to the cached 30 MiB: release and retry
    let s = a.stats();
    assert.equal(s.num_alloc_retries, 1);
    assert.equal(s['reserved_bytes.all.current'], 40 * MiB);
    const e = expectCode(() => a.malloc(40 * MiB), 'KD_CUDA_OOM', /^CUDA out of memory\. Tried to allocate 40\.00 MiB\. GPU 0 has a total capacity of 64\.00 MiB of which 24\.00 MiB is free/);
    assert.match(e.message, /40\.00 MiB is allocated by kindling/);
    assert.match(e.message, /Memory summary/);
    s = a.stats();
    assert.equal(s.num_ooms, 1);
    assert.equal(s.num_alloc_retries, 2);
    a.free(q);
    expectCode(() => a.malloc(2 ** 62), 'KD_CUDA_OOM', /Tried to allocate/);
  });

  it('setMemoryFraction caps reserved memory', function () {
    const a = new FakeAllocator({ capacity: 100 * MiB });
    a.setMemoryFraction(0.5);
    const e = expectCode(() => a.malloc(60 * MiB), 'KD_CUDA_OOM', /limited to 50\.00 MiB/);
    assert.ok(e);
    const p = a.malloc(40 * MiB);
    assert.ok(p > 0);
    expectCode(() => a.setMemoryFraction(1.5), 'KD_INVALID_ARGUMENT');
    expectCode(() => a.setMemoryFraction(0), 'KD_INVALID_ARGUMENT');
  });

  it('max_split_size_mb: big blocks are not split nor used for small requests', function () {
    const a = new FakeAllocator({ conf: 'max_split_size_mb:32' });
    const s0 = a.stats();
    assert.equal(s0.max_split_size, 32 * MiB);
    const p = a.malloc(40 * MiB);
    a.free(p);
    const q = a.malloc(12 * MiB); // would fit in p's block, but p is oversize
    assert.notEqual(q, p);
    assert.equal(a.device().mallocs, 2);
    const s = a.stats();
    assert.equal(s['oversize_segments.current'], 1);
    assert.equal(a.malloc(34 * MiB), p, 'an oversize request reuses an oversize block < size + 20 MiB');
    assert.equal(a.snapshot().find((g) => g.address === p).blocks.length, 1, 'not split');
    assert.equal(a.stats()['oversize_allocations.current'], 1);
  });

  it('parses KINDLING_CUDA_ALLOC_CONF like PyTorch', function () {
    assert.deepEqual(FakeAllocator.parseConf(''), { maxSplitSize: -1, gcThreshold: 0 });
    assert.deepEqual(FakeAllocator.parseConf('max_split_size_mb:128, garbage_collection_threshold:0.6'),
      { maxSplitSize: 128 * MiB, gcThreshold: 0.6 });
    expectCode(() => FakeAllocator.parseConf('max_split_size_mb:10'), 'KD_INVALID_ARGUMENT', /max_split_size_mb too small, must be > 20/);
    expectCode(() => FakeAllocator.parseConf('garbage_collection_threshold:1.5'), 'KD_INVALID_ARGUMENT', /too big/);
    expectCode(() => FakeAllocator.parseConf('garbage_collection_threshold:0'), 'KD_INVALID_ARGUMENT', /too small/);
    expectCode(() => FakeAllocator.parseConf('foo:1'), 'KD_INVALID_ARGUMENT', /Unrecognized CachingAllocator option: foo/);
    expectCode(() => FakeAllocator.parseConf('max_split_size_mb'), 'KD_INVALID_ARGUMENT', /key:value/);
    expectCode(() => FakeAllocator.parseConf('max_split_size_mb:abc'), 'KD_INVALID_ARGUMENT', /number/);
    expectCode(() => new FakeAllocator({ conf: 'nope:1' }), 'KD_INVALID_ARGUMENT');
  });

  it('garbage_collection_threshold reclaims cached segments before growing', function () {
    const a = new FakeAllocator({ capacity: 100 * MiB, conf: 'garbage_collection_threshold:0.5' });
    const p = a.malloc(40 * MiB);
    const q = a.malloc(20 * MiB);
    a.free(p); // 60 MiB reserved > 50 MiB
    a.malloc(12 * MiB, 3); // another stream: a new segment is needed; GC first frees the cached 40 MiB
    const s = a.stats();
    assert.equal(s['reserved_bytes.all.current'], 20 * MiB + 12 * MiB);
    assert.equal(s.num_alloc_retries, 0);
    a.free(q);
  });

  it('statistics: current, peak, allocated, freed; reset', function () {
    const a = new FakeAllocator();
    const p = a.malloc(MiB);
    const q = a.malloc(2 * MiB);
    a.free(p);
    let s = a.stats();
    assert.equal(s['allocated_bytes.all.current'], 2 * MiB);
    assert.equal(s['allocated_bytes.all.peak'], 3 * MiB);
    assert.equal(s['allocated_bytes.all.allocated'], 3 * MiB);
    assert.equal(s['allocated_bytes.all.freed'], MiB);
    assert.equal(s['allocated_bytes.small_pool.peak'], MiB);
    assert.equal(s['allocated_bytes.large_pool.current'], 2 * MiB);
    assert.equal(s['allocation.all.allocated'], 2);
    a.resetPeak();
    s = a.stats();
    assert.equal(s['allocated_bytes.all.peak'], 2 * MiB);
    a.resetAccumulated();
    s = a.stats();
    assert.equal(s['allocated_bytes.all.allocated'], 0);
    assert.equal(s['allocated_bytes.all.current'], 2 * MiB);
    const text = a.summary();
    for (const row of ['Allocated memory', 'GPU reserved memory', 'Non-releasable memory', 'from large pool', 'CUDA OOMs'])
      assert.ok(text.includes(row), row);
    a.free(q);
    expectCode(() => a.free(q), 'KD_INVALID_ARGUMENT', /not allocated here/);
    expectCode(() => a.recordStream(12345, 1), 'KD_INVALID_ARGUMENT');
  });

  it('survives many interleaved allocations (hash table, pools, coalescing)', function () {
    const a = new FakeAllocator();
    let seed = 1;
    const rand = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
    const live = [];
    let expect = 0;
    for (let i = 0; i < 3000; i++) {
      if (live.length && rand() < 0.45) {
        const [ptr, size] = live.splice(Math.floor(rand() * live.length), 1)[0];
        a.free(ptr);
        expect -= size;
      } else {
        const n = rand() < 0.8 ? 1 + Math.floor(rand() * 64 * KiB) : 1 + Math.floor(rand() * 12 * MiB);
        const size = Math.max(512, Math.ceil(n / 512) * 512);
        live.push([a.malloc(n, Math.floor(rand() * 2)), size]);
        expect += size;
      }
    }
    // blocks never overlap
    const sorted = live.slice().sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i - 1][0] + sorted[i - 1][1] <= sorted[i][0]);
    const inUse = a.snapshot().flatMap((g) => g.blocks).filter((b) => b.state === 'active_allocated');
    assert.equal(inUse.length, live.length);
    assert.equal(a.stats()['allocated_bytes.all.current'], inUse.reduce((x, b) => x + b.size, 0));
    assert.equal(a.stats()['requested_bytes.all.current'], inUse.reduce((x, b) => x + b.requestedSize, 0));
    assert.ok(a.stats()['allocated_bytes.all.current'] >= expect);
    for (const [ptr] of live) a.free(ptr);
    const s = a.stats();
    assert.equal(s['allocated_bytes.all.current'], 0);
    assert.equal(s['inactive_split.all.current'], 0, 'everything coalesced');
    for (const seg of a.snapshot()) assert.equal(seg.blocks.length, 1);
    a.emptyCache();
    assert.equal(a.device().used, 0);
  });

  it('graph-private pools: captures allocate from their pool, shared on request, released by the last reset', function () {
    const a = new FakeAllocator();
    const S = 7; // the capturing stream
    const before = a.malloc(1000, S);
    a.free(before); // a cached block of the ordinary pool on that stream
    a.beginCapture(1, S);
    const p = a.malloc(1000, S);
    assert.notEqual(p, before, 'a capture does not take ordinary cached blocks');
    const tmp = a.malloc(4096, S);
    a.free(tmp); // freed during the capture: stays in the graph's pool
    const q = a.malloc(4096, S);
    assert.equal(q, tmp, 'the capture reuses what it freed');
    a.endCapture(S);
    a.free(q);
    assert.notEqual(a.malloc(4096, S), tmp, 'ordinary allocations never get private blocks');
    a.emptyCache();
    assert.equal(a.stats()['segment.all.current'], 2, 'emptyCache keeps the live pool (and the live block)');
    a.beginCapture(1, S); // a second graph shares pool 1
    assert.equal(a.poolUses(1), 2);
    assert.equal(a.malloc(4096, S), tmp, 'a shared pool serves the next capture');
    a.endCapture(S);
    a.beginCapture(2, S); // a new pool starts empty
    const r = a.malloc(4096, S);
    assert.ok(r !== tmp && r !== p);
    a.endCapture(S);
    a.releasePool(1);
    assert.equal(a.poolUses(1), 1);
    const mid = a.stats()['segment.all.current'];
    a.releasePool(1);
    assert.equal(a.poolUses(1), 0);
    assert.equal(a.stats()['segment.all.current'], mid, 'live blocks keep their segment');
    a.free(p);
    a.free(tmp);
    assert.equal(a.stats()['segment.all.current'], mid - 1, "the pool's segment goes back once free");
    expectCode(() => a.releasePool(1), 'KD_INVALID_ARGUMENT', /refused/);
    expectCode(() => a.beginCapture(0, S), 'KD_INVALID_ARGUMENT', /refused/);
  });
});
