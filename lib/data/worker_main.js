// worker_main.js - the program of a DataLoader worker thread (started by lib/data/worker_pool.js).
// It loads kindling and the dataset from their recipes (lib/data/portable.js), seeds kindling's
// generator with its seed (the loader's base seed + its id, as PyTorch's workers), sets
// kd.data.getWorkerInfo(), runs the workerInitFn, says 'ready', then answers the main thread:
//   {type: 'task', epoch, k, indices}  map-style: collate(indices.map(get)) (or, without
//                                      auto-batching, convert(get(index)))
//   {type: 'next', epoch, k}           iterable-style: the next batch of its own iterator, or
//                                      {type: 'stop'} when the iterator is done
//   {type: 'reset'}                    a new epoch with persistent workers: a fresh iterator
// Replies are {type: 'result', epoch, k, value} (tensors encoded by lib/data/transfer.js, their
// buffers transferred) or {type: 'error', epoch, k, error} with the error's name, message, code
// and stack.
'use strict';

const { parentPort, workerData } = require('node:worker_threads');

const kd = require(workerData.root);
const { load } = require('./portable');
const { setWorkerInfo } = require('./worker_info');
const { encode } = require('./transfer')(kd, kd.Tensor);

const { id, numWorkers, seed, mode, batchSize, dropLast } = workerData;
let dataset;
let collate;
let iterator = null;

function errorRecord(e) {
  if (e === null || typeof e !== 'object') return { name: 'Error', message: String(e), stack: String(e), code: undefined };
  return { name: e.name || 'Error', message: String(e.message), stack: String(e.stack || e.message), code: e.code };
}

function send(msg, value) {
  const { value: encoded, transfer } = encode(value);
  parentPort.postMessage({ ...msg, value: encoded }, transfer);
}

const get = async (i) => dataset.get(i);

function newIterator() {
  if (typeof dataset[Symbol.asyncIterator] === 'function') return dataset[Symbol.asyncIterator]();
  return dataset[Symbol.iterator]();
}

async function nextBatch() {
  if (batchSize === null) {
    const r = await iterator.next();
    return r.done ? null : [r.value];
  }
  const samples = [];
  while (samples.length < batchSize) {
    const r = await iterator.next();
    if (r.done) break;
    samples.push(r.value);
  }
  if (samples.length === 0 || (dropLast && samples.length < batchSize)) return null;
  return samples;
}

async function handle(msg) {
  const { epoch, k } = msg;
  try {
    let samples;
    if (msg.type === 'task') {
      samples = msg.indices === null ? [await get(msg.index)] : await Promise.all(msg.indices.map(get));
    } else {
      samples = await nextBatch();
      if (samples === null) { parentPort.postMessage({ type: 'stop', epoch, k }); return; }
    }
    const auto = msg.type === 'task' ? msg.indices !== null : batchSize !== null;
    send({ type: 'result', epoch, k }, auto ? collate(samples) : collate(samples[0]));
  } catch (e) {
    parentPort.postMessage({ type: 'error', epoch, k, error: errorRecord(e) });
  }
}

// Tasks run one at a time, in the order they came (a worker's batches are in order).
let chain = Promise.resolve();
parentPort.on('message', (msg) => {
  if (msg.type === 'reset') {
    chain = chain.then(() => { if (mode === 'iterable') iterator = newIterator(); });
    return;
  }
  chain = chain.then(() => handle(msg));
});

try {
  kd.manualSeed(BigInt(seed));
  dataset = load(workerData.dataset, kd, true);
  setWorkerInfo({ id, numWorkers, seed: BigInt(seed), dataset });
  if (workerData.collate) collate = load(workerData.collate, kd, false);
  else collate = workerData.autoCollation ? kd.data.defaultCollate : kd.data.defaultConvert;
  if (workerData.initFn) load(workerData.initFn, kd, false)(id);
  if (mode === 'iterable') iterator = newIterator();
  parentPort.postMessage({ type: 'ready' });
} catch (e) {
  parentPort.postMessage({ type: 'initError', error: errorRecord(e) });
}
