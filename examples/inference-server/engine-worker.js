// engine-worker.js - the worker_thread side of engine.js's WorkerEngine: loads the model once,
// then answers {id, x, n} batches with {id, probs} (buffers transferred, not copied).
'use strict';

const { parentPort, workerData } = require('node:worker_threads');

let engine;
try {
  const { InlineEngine } = require('./engine');
  engine = new InlineEngine(workerData.spec, { device: workerData.device, threads: workerData.threads });
  parentPort.postMessage({ config: engine.config, classes: engine.classes });
} catch (e) {
  parentPort.postMessage({ error: e.message });
  process.exit(1);
}

parentPort.on('message', async ({ id, x, n }) => {
  try {
    const probs = await engine.run(x, n);
    parentPort.postMessage({ id, probs }, [probs.buffer]);
  } catch (e) {
    parentPort.postMessage({ id, error: e.message });
  }
});
