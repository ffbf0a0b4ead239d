// worker_info.js - kd.data.getWorkerInfo(): inside a DataLoader worker thread, what that worker is
// ({id, numWorkers, seed, dataset}, frozen), as torch.utils.data.get_worker_info(); null on the
// main thread and in threads that are not DataLoader workers. An IterableDataset uses it to
// split its stream between workers. Each thread loads its own copy of this module, so the
// value is per thread; lib/data/worker_main.js sets it before the worker's init function runs.
'use strict';

let info = null;

/** The current DataLoader worker's {id, numWorkers, seed, dataset}, or null outside workers. */
function getWorkerInfo() { return info; }

function setWorkerInfo(value) { info = value === null ? null : Object.freeze({ ...value }); }

module.exports = { getWorkerInfo, setWorkerInfo };
