// distributed_store.test.js - kd.distributed.TCPStore and PrefixStore: PyTorch's store semantics
// (get waits for a key, add counts from 0, wait/check, deleteKey), timeouts as KD_TIMEOUT
// errors, and a rendezvous of forked processes on 127.0.0.1.
'use strict';
const assert = require('assert');
const path = require('path');
const { fork } = require('child_process');
const kd = require('..');
const { TCPStore, PrefixStore } = kd.distributed;

describe('kd.distributed stores', function () {
  this.timeout(20000);
  let master;
  beforeEach(async () => { master = new TCPStore('127.0.0.1', 0, 2, true, { timeout: 2000 }); await master.ready; });
  afterEach(async () => { await master.close(); });

  it('set/get/add/check/deleteKey/numKeys on the master and a client', async () => {
    const client = new TCPStore('127.0.0.1', master.port, 2, false, { timeout: 2000 });
    await master.set('a', 'xyz');
    assert.strictEqual((await client.get('a')).toString(), 'xyz');
    assert.strictEqual(await client.add('n', 3), 3);
    assert.strictEqual(await master.add('n', -1), 2);
    assert.strictEqual((await master.get('n')).toString(), '2');
    assert.strictEqual(await client.check(['a', 'n']), true);
    assert.strictEqual(await client.check(['a', 'missing']), false);
    assert.strictEqual(await client.numKeys(), 2);
    assert.strictEqual(await client.deleteKey('a'), true);
    assert.strictEqual(await client.deleteKey('a'), false);
    assert.strictEqual(await client.check(['a']), false);
    assert.strictEqual((await client.compareSet('c', '', 'v1')).toString(), 'v1');
    assert.strictEqual((await client.compareSet('c', 'zz', 'v2')).toString(), 'v1');
    assert.strictEqual((await client.compareSet('c', 'v1', 'v2')).toString(), 'v2');
    const bin = Buffer.from([0, 255, 10, 13]);
    await client.set('bin', bin);
    assert.deepStrictEqual(await master.get('bin'), bin);
    await client.close();
  });

  it('get and wait block until the key is set', async () => {
    const client = new TCPStore('127.0.0.1', master.port, 2, false, { timeout: 2000 });
    const got = client.get('late');
    const waited = client.wait(['late', 'later']);
    setTimeout(() => { master.set('late', 'v'); master.set('later', 'w'); }, 100);
    assert.strictEqual((await got).toString(), 'v');
    await waited;
    await client.close();
  });

  it('a key never set is a KD_TIMEOUT error, and the store still works after it', async () => {
    await assert.rejects(master.wait(['never'], 200), (e) => e.code === 'KD_TIMEOUT' && /never/.test(e.message));
    master.setTimeout(150);
    await assert.rejects(master.get('never'), { code: 'KD_TIMEOUT' });
    await master.set('never', '1');
    assert.strictEqual((await master.get('never')).toString(), '1');
  });

  it('a client with no server times out with KD_TIMEOUT', async () => {
    const port = master.port;
    await master.close();
    const lonely = new TCPStore('127.0.0.1', port, 2, false, { timeout: 300 });
    await assert.rejects(lonely.get('x'), { code: 'KD_TIMEOUT' });
    master = new TCPStore('127.0.0.1', 0, 1, true); await master.ready;
  });

  it('a closed server fails pending requests with KD_CONNECTION_CLOSED', async () => {
    const client = new TCPStore('127.0.0.1', master.port, 2, false, { timeout: 5000 });
    await client.ready;
    const pending = client.get('never');
    await master.close();
    await assert.rejects(pending, { code: 'KD_CONNECTION_CLOSED' });
    master = new TCPStore('127.0.0.1', 0, 1, true); await master.ready;
  });

  it('bad arguments are TypeErrors', async () => {
    assert.throws(() => new TCPStore(1, 0), TypeError);
    assert.throws(() => new TCPStore('127.0.0.1', 70000), TypeError);
    await assert.rejects(master.set(3, 'x'), TypeError);
    await assert.rejects(master.set('k', 3), TypeError);
    await assert.rejects(master.add('k', 1.5), TypeError);
    await master.set('s', 'abc');
    await assert.rejects(master.add('s', 1), { code: 'KD_DISTRIBUTED' });
  });

  it('PrefixStore namespaces keys', async () => {
    const a = new PrefixStore('a', master), b = new PrefixStore('b', master);
    await a.set('k', '1'); await b.set('k', '2');
    assert.strictEqual((await a.get('k')).toString(), '1');
    assert.strictEqual((await b.get('k')).toString(), '2');
    assert.strictEqual((await master.get('a/k')).toString(), '1');
    assert.strictEqual(await a.add('n', 5), 5);
    assert.strictEqual(await b.check(['n']), false);
    await assert.rejects(b.wait(['n'], 100), { code: 'KD_TIMEOUT' });
  });

  it('three forked ranks rendezvous through the master', async () => {
    const world = 3;
    const children = [];
    for (let r = 0; r < world; r++) {
      children.push(new Promise((resolve, reject) => {
        const c = fork(path.join(__dirname, 'distributed_store_child.js'), [master.port, r, world].map(String));
        c.on('message', resolve); c.on('error', reject);
      }));
    }
    const results = await Promise.all(children);
    for (const m of results) {
      assert.strictEqual(m.error, undefined);
      assert.deepStrictEqual(m.seen, [0, 1, 2].map((r) => `hello from ${r}`));
    }
    assert.strictEqual((await master.get('joined')).toString(), '3');
  });
});
