// distributed_file_store.test.js - kd.distributed.FileStore: c10d's store semantics over a
// shared file, timeouts as KD_TIMEOUT, and lock-free adds from concurrent forked processes that
// each see distinct results.
'use strict';
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { fork } = require('child_process');
const kd = require('..');
const { FileStore, PrefixStore } = kd.distributed;

describe('kd.distributed.FileStore', function () {
  this.timeout(30000);
  let dir;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-filestore-')); });
  afterEach(() => { fs.rmSync(dir, { recursive: true, force: true }); });

  it('set/get/add/compareSet/check/deleteKey/numKeys across two stores on one file', async () => {
    const f = path.join(dir, 'store');
    const a = new FileStore(f, 2, { timeout: 2000 }), b = new FileStore(f, 2, { timeout: 2000 });
    await a.set('k', 'v');
    assert.strictEqual((await b.get('k')).toString(), 'v');
    await b.set('k', Buffer.from([1, 2, 10]));
    assert.deepStrictEqual(await a.get('k'), Buffer.from([1, 2, 10]));
    assert.strictEqual(await a.add('n', 2), 2);
    assert.strictEqual(await b.add('n', 5), 7);
    assert.strictEqual(await a.check(['k', 'n']), true);
    assert.strictEqual(await a.check(['k', 'x']), false);
    assert.strictEqual(await a.numKeys(), 2);
    assert.strictEqual(await b.deleteKey('k'), true);
    assert.strictEqual(await a.deleteKey('k'), false);
    assert.strictEqual((await a.compareSet('c', '', 'one')).toString(), 'one');
    assert.strictEqual((await b.compareSet('c', 'no', 'two')).toString(), 'one');
    assert.strictEqual((await b.compareSet('c', 'one', 'two')).toString(), 'two');
    await a.set('s', 'text');
    await assert.rejects(a.add('s', 1), { code: 'KD_DISTRIBUTED' });
  });

  it('get waits for a key set later; a key never set is KD_TIMEOUT', async () => {
    const f = path.join(dir, 'store');
    const a = new FileStore(f, 2, { timeout: 2000 }), b = new FileStore(f, 2);
    const got = a.get('late');
    setTimeout(() => b.set('late', 'x'), 100);
    assert.strictEqual((await got).toString(), 'x');
    await assert.rejects(a.wait(['never'], 150), (e) => e.code === 'KD_TIMEOUT' && /never/.test(e.message));
    const p = new PrefixStore('pg', a);
    await p.set('r', '1');
    assert.strictEqual((await b.get('pg/r')).toString(), '1');
  });

  it('an add learns its own result when another process appends right after it', async () => {
    const f = path.join(dir, 'store');
    const a = new FileStore(f), b = new FileStore(f);
    const own = a._append.bind(a);
    // Another process's record lands between this add's append and its replay.
    a._append = (rec) => { const id = own(rec); fs.appendFileSync(f, JSON.stringify({ op: 'add', key: rec.key, amount: 100, id: 'other-0' }) + '\n'); return id; };
    assert.strictEqual(await a.add('n', 1), 1);
    assert.strictEqual(await b.deleteKey('m'), false);
    assert.strictEqual((await b.get('n')).toString(), '101');
  });

  it('bad arguments are errors with codes', async () => {
    assert.throws(() => new FileStore(''), TypeError);
    assert.throws(() => new FileStore(path.join(dir, 'no', 'such', 'dir', 'f')), { code: 'KD_IO_ERROR' });
    const a = new FileStore(path.join(dir, 'store'));
    await assert.rejects(a.set('k', 5), TypeError);
    await assert.rejects(a.add('k', 0.5), TypeError);
    await assert.rejects(a.wait('k'), TypeError);
  });

  it('concurrent adds from three processes each get a distinct value', async () => {
    const f = path.join(dir, 'store');
    const times = 30, world = 3;
    const results = await Promise.all([...Array(world).keys()].map((r) => new Promise((resolve, reject) => {
      const c = fork(path.join(__dirname, 'distributed_file_store_child.js'), [f, String(r), String(times)]);
      c.on('message', resolve); c.on('error', reject);
    })));
    const all = [];
    for (const m of results) { assert.strictEqual(m.error, undefined); all.push(...m.seen); }
    all.sort((x, y) => x - y);
    assert.deepStrictEqual(all, [...Array(times * world).keys()].map((i) => i + 1));
    const s = new FileStore(f);
    assert.strictEqual((await s.get('counter')).toString(), String(times * world));
  });
});
