// data_workers.test.js - DataLoader with numWorkers > 0 (worker_threads): datasets loaded in the
// workers from a module spec, a factory function or kd.data.fromModule; batches in the order of
// numWorkers 0 although workers finish out of order; shuffled order, worker seeds and iterable
// datasets split by getWorkerInfo() as PyTorch 1.13 (test/fixtures/data.json); tensors of every
// dtype crossing threads; workerInitFn; errors with the worker's stack (a throwing dataset, a
// worker that exits, a worker that fails to load, a timeout); persistent workers over epochs;
// and the option errors that only numWorkers > 0 has.
'use strict';

const path = require('node:path');
const { kd, assert, fixture } = require('./helpers');

const { DataLoader, Generator } = kd.data;
const MOD = path.join(__dirname, 'fixtures', 'data_workers', 'datasets.js');
const spec = (name, ...args) => ({ module: MOD, export: name, args });
const nums = (t) => Array.from(t.dataSync(), Number);

async function collect(loader) {
  const out = [];
  for await (const b of loader) out.push(b);
  return out;
}

describe('DataLoader numWorkers > 0', function () {
  this.timeout(60000);
  const cases = fixture('data').workers;

  it('batches come in order from workers that finish out of order, as numWorkers 0 gives them', async () => {
    const ref = await collect(new DataLoader(spec('squares', 23, true), { batchSize: 4 }));
    for (const numWorkers of [1, 3]) {
      const got = await collect(new DataLoader(spec('squares', 23, true), { batchSize: 4, numWorkers, prefetchFactor: 3 }));
      assert.equal(got.length, ref.length);
      got.forEach((b, k) => {
        assert.deepEqual(b.x.arraySync(), ref[k].x.arraySync());
        assert.deepEqual(nums(b.y), nums(ref[k].y));
        assert.equal(b.y.dtype, 'int64');
        assert.deepEqual(b.name, ref[k].name);
      });
    }
  });

  it('shuffles with the generator in the order of numWorkers 0 (and PyTorch\'s)', async () => {
    const loaderCase = fixture('data').loaders[2];
    const g = new Generator(loaderCase.seed);
    const loader = new DataLoader(spec('squares', loaderCase.n), { batchSize: loaderCase.batchSize, shuffle: true, generator: g, numWorkers: 2 });
    const epochs = [];
    for (let e = 0; e < 2; e++) epochs.push((await collect(loader)).map((b) => nums(b.y)));
    assert.deepEqual(epochs, loaderCase.epochs);
  });

  it('worker seeds are the base seed drawn from the generator + the worker id, as PyTorch\'s; workerInitFn runs once per worker', async () => {
    for (const c of cases.seeds) {
      const loader = new DataLoader(spec('whoami', 4), {
        batchSize: 1, shuffle: true, numWorkers: 2, generator: new Generator(c.seed),
        workerInitFn: (id) => { globalThis.initCalls = (globalThis.initCalls || 0) + 1; void id; },
      });
      const seen = new Map();
      for (const [s] of await collect(loader)) {
        const [seed, id, initCalls, kdSeed] = s.split(':');
        seen.set(id, seed);
        assert.equal(initCalls, '1');
        assert.equal(kdSeed, seed);
      }
      assert.deepEqual(Object.fromEntries(seen), c.workers);
    }
  });

  it('iterable datasets split by getWorkerInfo() come round-robin, as PyTorch\'s', async () => {
    for (const c of cases.iterable) {
      const loader = new DataLoader(spec('stream', c.n), { batchSize: c.batchSize, numWorkers: c.numWorkers, dropLast: c.dropLast });
      const got = (await collect(loader)).map((b) => (b instanceof kd.Tensor ? nums(b) : b));
      assert.deepEqual(got, c.batches, JSON.stringify(c));
    }
  });

  it('tensors of every dtype cross threads; a factory function is a dataset recipe', async () => {
    const factory = () => new (class extends kd.data.Dataset {
      get length() { return 3; }
      get(i) {
        return {
          h: kd.tensor([i + 0.5], { dtype: 'float16' }), bf: kd.tensor([i + 0.25], { dtype: 'bfloat16' }),
          b: kd.tensor(i % 2 === 0), l: kd.tensor(BigInt64Array.of(BigInt(i) * 2n ** 40n + 1n)),
          m: kd.arange(6, { dtype: 'int16' }).reshape([2, 3]).transpose(0, 1).add(i), f: new Float32Array([i]),
        };
      }
    })();
    const [b] = await collect(new DataLoader(factory, { batchSize: 3, numWorkers: 2 }));
    assert.equal(b.h.dtype, 'float16');
    assert.deepEqual(b.h.arraySync(), [[0.5], [1.5], [2.5]]);
    assert.equal(b.bf.dtype, 'bfloat16');
    assert.deepEqual(b.bf.arraySync(), [[0.25], [1.25], [2.25]]);
    assert.equal(b.b.dtype, 'bool');
    assert.deepEqual(b.b.arraySync(), [true, false, true]);
    assert.equal(b.l.dtype, 'int64');
    assert.deepEqual(Array.from(b.l.dataSync()), [1n, 2n ** 40n + 1n, 2n ** 41n + 1n]);
    assert.deepEqual(b.m.shape, [3, 3, 2]);
    assert.deepEqual(b.m.arraySync()[1], [[1, 4], [2, 5], [3, 6]]);
    assert.equal(b.f.dtype, 'float32');
    assert.deepEqual(b.f.arraySync(), [[0], [1], [2]]);
  });

  it('a collateFn and kd.data.fromModule', async () => {
    const ds = kd.data.fromModule(spec('squares', 6));
    assert.equal(ds.length, 6);
    const loader = new DataLoader(ds, { batchSize: 4, numWorkers: 2, collateFn: (samples) => samples.map((s) => s.y * 10) });
    assert.deepEqual(await collect(loader), [[0, 10, 20, 30], [40, 50]]);
    // without auto-batching each sample goes through defaultConvert (or the collateFn) alone
    assert.deepEqual((await collect(new DataLoader(spec('stream', 3), { batchSize: null, numWorkers: 1 }))), [0, 1, 2]);
    assert.deepEqual((await collect(new DataLoader(ds, { batchSize: null, numWorkers: 2, collateFn: (s) => s.name }))), ['sample 0', 'sample 1', 'sample 2', 'sample 3', 'sample 4', 'sample 5']);
  });

  it('an error in a worker rejects that batch with the worker\'s stack and its class', async () => {
    const loader = new DataLoader(spec('failing', 10, 5), { batchSize: 2, numWorkers: 2 });
    const seen = [];
    await assert.rejects(async () => { for await (const b of loader) seen.push(nums(b)); }, (e) => {
      assert.ok(e instanceof TypeError);
      assert.equal(e.code, 'KD_INVALID_TYPE');
      assert.match(e.message, /^Caught TypeError in DataLoader worker 0\.\nOriginal TypeError: bad sample 5\n/);
      assert.match(e.message, /datasets\.js:\d+/);
      assert.equal(e.workerId, 0);
      assert.match(e.workerStack, /Failing\.get/);
      return true;
    });
    assert.deepEqual(seen, [[0, 1], [2, 3]]);
    // a closure is not sent: the worker's ReferenceError says what was missing
    const factor = 3;
    const closure = new DataLoader(spec('squares', 4), { batchSize: 2, numWorkers: 1, collateFn: (s) => s.length * factor });
    await assert.rejects(collect(closure), /Caught ReferenceError in DataLoader worker 0\.\nOriginal ReferenceError: factor is not defined/);
  });

  it('a worker that exits, fails to load or hangs is an error, not a hang', async () => {
    await assert.rejects(collect(new DataLoader(spec('exiting', 10, 3), { batchSize: 2, numWorkers: 2 })),
      { code: 'KD_WORKER_EXITED', message: /DataLoader worker \(id 1\) exited unexpectedly with exit code 3/ });
    const onlyMain = () => {
      if (!require('node:worker_threads').isMainThread) throw new RangeError('no data in workers');
      return new (class extends kd.data.Dataset { get length() { return 2; } get(i) { return i; } })();
    };
    await assert.rejects(collect(new DataLoader(onlyMain, { numWorkers: 1 })),
      (e) => e instanceof RangeError && /^Caught RangeError in DataLoader worker 0 while loading\.\nOriginal RangeError: no data in workers/.test(e.message));
    const t0 = Date.now();
    await assert.rejects(collect(new DataLoader(spec('hanging', 6, 2), { batchSize: 1, numWorkers: 2, timeout: 0.3 })),
      { code: 'KD_TIMEOUT', message: 'DataLoader timed out after 0.3 seconds' });
    assert.ok(Date.now() - t0 < 5000);
  });

  it('persistent workers serve every epoch (map-style and iterable), survive a break, and shut down', async () => {
    const loader = new DataLoader(spec('whoami', 6), { batchSize: 3, numWorkers: 2, persistentWorkers: true, generator: new Generator(1) });
    const first = (await collect(loader)).flat();
    const pool = loader._pool;
    assert.ok(pool);
    for await (const b of loader) { void b; break; }
    const third = (await collect(loader)).flat();
    assert.equal(loader._pool, pool);
    assert.deepEqual(third, first); // same workers, same seeds: drawn once
    await loader.shutdown();
    assert.equal(loader._pool, null);
    const again = (await collect(loader)).flat();
    assert.notDeepEqual(again, first); // a new pool draws a new base seed
    await loader.shutdown();

    // two passes at once on persistent workers: the older one ends with an error, not a hang
    const twice = new DataLoader(spec('hanging', 40, 2), { batchSize: 2, numWorkers: 2, persistentWorkers: true });
    const older = twice[Symbol.asyncIterator]();
    assert.deepEqual(nums((await older.next()).value), [0, 1]);
    const pending = older.next(); // batch [2, 3] never comes
    await new Promise((r) => setTimeout(r, 50));
    twice[Symbol.asyncIterator]();
    await assert.rejects(pending, /a new pass started on the same persistent workers before this one ended/);
    await twice.shutdown();

    const stream = new DataLoader(spec('stream', 5), { batchSize: 2, numWorkers: 2, persistentWorkers: true });
    const expected = [[0, 1], [3, 4], [2]];
    for (let e = 0; e < 3; e++) assert.deepEqual((await collect(stream)).map(nums), expected);
    await stream.shutdown();
  });

  it('a TensorDataset with numWorkers > 0 is gathered on the libuv pool, as with numWorkers 0', async () => {
    const ds = new kd.data.TensorDataset(kd.arange(20).reshape([10, 2]), kd.arange(10));
    const opts = { batchSize: 4, shuffle: true, numWorkers: 2, persistentWorkers: true };
    const a = await collect(new DataLoader(ds, { ...opts, generator: new Generator(4) }));
    const b = await collect(new DataLoader(ds, { batchSize: 4, shuffle: true, generator: new Generator(4) }));
    assert.deepEqual(a.map(([x, y]) => [x.arraySync(), nums(y)]), b.map(([x, y]) => [x.arraySync(), nums(y)]));
    assert.deepEqual([...new DataLoader(ds, { batchSize: 5, numWorkers: 2 })].map(([, y]) => nums(y)), [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]);
    // a custom collate or a workerInitFn needs the worker threads, hence a recipe
    assert.throws(() => new DataLoader(ds, { numWorkers: 2, collateFn: (s) => s }), /numWorkers > 0 loads the dataset in worker threads/);
    assert.throws(() => new DataLoader(ds, { numWorkers: 2, workerInitFn: () => {} }), /numWorkers > 0 loads the dataset in worker threads/);
  });

  it('neither idle persistent workers nor an unfinished pass keep the process alive', () => {
    const script = `
      const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      (async () => {
        const sp = ${JSON.stringify(spec('squares', 100))};
        const persistent = new kd.data.DataLoader(sp, { batchSize: 4, numWorkers: 2, persistentWorkers: true });
        for await (const b of persistent) void b;
        const it = new kd.data.DataLoader(sp, { batchSize: 4, numWorkers: 2 })[Symbol.asyncIterator]();
        const first = await it.next();
        console.log(first.value.y.dataSync().length);
      })();`;
    const t0 = Date.now();
    const out = require('node:child_process').execFileSync(process.execPath, ['-e', script], { timeout: 30000, encoding: 'utf8' });
    assert.equal(out.trim(), '4');
    assert.ok(Date.now() - t0 < 30000);
  });

  it('errors that only numWorkers > 0 has', () => {
    assert.throws(() => [...new DataLoader(spec('squares', 3), { numWorkers: 1 })], { code: 'KD_INVALID_TYPE', message: /iterate with `for await`/ });
    assert.throws(() => new DataLoader({ module: './no/such/module.js' }, { numWorkers: 1 }), { code: 'KD_INVALID_ARGUMENT', message: /cannot find module/ });
    assert.throws(() => new DataLoader(spec('nope'), { numWorkers: 1 }), { code: 'KD_INVALID_ARGUMENT', message: /has no export 'nope'/ });
    assert.throws(() => new DataLoader(spec('squares', 3), { numWorkers: 1, collateFn: Math.max }), { code: 'KD_INVALID_ARGUMENT', message: /built-in or bound function/ });
    const obj = { collate(s) { return s; } };
    assert.throws(() => new DataLoader(spec('squares', 3), { numWorkers: 1, collateFn: obj.collate }), { code: 'KD_INVALID_ARGUMENT', message: /does not compile on its own/ });
    assert.throws(() => new DataLoader(spec('squares', 3), { numWorkers: 1, prefetchFactor: 0 }), { code: 'KD_INVALID_ARGUMENT' });
    assert.throws(() => new DataLoader(spec('squares', 3), { numWorkers: 1.5 }), { code: 'KD_INVALID_TYPE' });
    assert.throws(() => kd.data.fromModule(5), { code: 'KD_INVALID_TYPE' });
  });
});
