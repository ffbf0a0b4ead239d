// data/index.js - kd.data: torch.utils.data's vocabulary (PyTorch 1.13), camelCased:
//   Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset, Subset, randomSplit
//                                                   (lib/data/dataset.js)
//   Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
//   BatchSampler                                    (lib/data/sampler.js)
//   DistributedSampler                              (lib/data/distributed.js)
//   DataLoader                                      (lib/data/dataloader.js; worker threads:
//                                                    worker_pool.js, worker_main.js, transfer.js;
//                                                    tree.js: the walk over a batch's structure)
//   defaultCollate, defaultConvert                  (lib/data/collate.js)
//   getWorkerInfo                                   (lib/data/worker_info.js)
//   fromModule                                      (lib/data/portable.js: datasets workers load)
//   Generator                                       (lib/data/generator.js: PyTorch's CPU mt19937)
//   gatherRows                                      (lib/data/gather.js: background row gathers)
'use strict';

const { Generator } = require('./generator');
const makeSamplers = require('./sampler');
const makeDistributedSampler = require('./distributed');
const makeDatasets = require('./dataset');
const makeCollate = require('./collate');
const makeDataLoader = require('./dataloader');
const makeGather = require('./gather');
const makeTransfer = require('./transfer');
const portable = require('./portable');
const { getWorkerInfo } = require('./worker_info');

module.exports = function makeData(kd, Tensor, N) {
  const samplers = makeSamplers(kd);
  const { DistributedSampler } = makeDistributedSampler(kd, samplers);
  const datasets = makeDatasets(kd, Tensor, samplers.drawSeed);
  const collation = makeCollate(kd, Tensor);
  const { gatherRows } = makeGather(kd, Tensor, N);
  const transfer = makeTransfer(kd, Tensor);
  const { DataLoader } = makeDataLoader(kd, Tensor, datasets, samplers, collation, gatherRows, transfer);

  /**
   * The dataset a module makes (a path, or {module, export, args}: see lib/data/portable.js),
   * loaded on this thread and carrying its recipe, so a DataLoader with numWorkers > 0 can load
   * it in its worker threads.
   */
  function fromModule(spec) {
    if (typeof spec !== 'string' && !portable.isPlainObject(spec)) throw new kd.KindlingTypeError('fromModule: expected a module path or {module, export, args}');
    const recipe = portable.toPortable(typeof spec === 'string' ? { module: spec } : spec, 'fromModule');
    return portable.tag(portable.load(recipe, kd, true), recipe);
  }

  return Object.freeze({
    Dataset: datasets.Dataset,
    IterableDataset: datasets.IterableDataset,
    TensorDataset: datasets.TensorDataset,
    ConcatDataset: datasets.ConcatDataset,
    ChainDataset: datasets.ChainDataset,
    Subset: datasets.Subset,
    randomSplit: datasets.randomSplit,
    Sampler: samplers.Sampler,
    SequentialSampler: samplers.SequentialSampler,
    RandomSampler: samplers.RandomSampler,
    SubsetRandomSampler: samplers.SubsetRandomSampler,
    WeightedRandomSampler: samplers.WeightedRandomSampler,
    BatchSampler: samplers.BatchSampler,
    DistributedSampler,
    DataLoader,
    defaultCollate: collation.defaultCollate,
    defaultConvert: collation.defaultConvert,
    getWorkerInfo,
    fromModule,
    Generator,
    gatherRows,
  });
};
