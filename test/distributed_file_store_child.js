// distributed_file_store_child.js - a rank of test/distributed_file_store.test.js: adds to a
// shared counter many times through a FileStore, then reports the values add returned.
'use strict';
const kd = require('..');
(async () => {
  const [file, rank, times] = process.argv.slice(2);
  const store = new kd.distributed.FileStore(file, -1, { timeout: 10000 });
  const seen = [];
  for (let i = 0; i < Number(times); i++) seen.push(await store.add('counter', 1));
  await store.set(`done${rank}`, '1');
  process.send({ seen });
})().catch((e) => { process.send({ error: e.code || e.message }); process.exitCode = 1; });
