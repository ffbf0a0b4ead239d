// distributed_store_child.js - a rank of test/distributed_store.test.js: joins the master's
// TCPStore, counts itself in with add, sets its key and reads every other rank's.
'use strict';
const kd = require('..');
(async () => {
  const [port, rank, world] = process.argv.slice(2).map(Number);
  const store = new kd.distributed.TCPStore('127.0.0.1', port, world, false, { timeout: 10000 });
  await store.add('joined', 1);
  await store.set(`rank${rank}`, `hello from ${rank}`);
  const seen = [];
  for (let r = 0; r < world; r++) seen.push((await store.get(`rank${r}`)).toString());
  process.send({ rank, seen });
  await store.close();
})().catch((e) => { process.send({ error: e.code }); process.exitCode = 1; });
