// data/index.js - kd.data: datasets, the DataLoader, default collation and random splits,
// with PyTorch's torch.utils.data vocabulary:
//   Dataset, TensorDataset, Subset, randomSplit   (lib/data/dataset.js)
//   DataLoader                                    (lib/data/dataloader.js)
//   defaultCollate                                (lib/data/collate.js)
//   Generator                                     (lib/data/generator.js: the seeded shuffles)
//   gatherRows                                    (lib/data/gather.js: background row gathers)
'use strict';

const { Generator } = require('./generator');
const makeDatasets = require('./dataset');
const makeCollate = require('./collate');
const makeDataLoader = require('./dataloader');
const makeGather = require('./gather');

module.exports = function makeData(kd, Tensor, N) {
  const datasets = makeDatasets(kd, Tensor);
  const { defaultCollate } = makeCollate(kd, Tensor);
  const { gatherRows } = makeGather(kd, Tensor, N);
  const { DataLoader } = makeDataLoader(kd, Tensor, datasets, defaultCollate, gatherRows);
  return Object.freeze({
    Dataset: datasets.Dataset,
    TensorDataset: datasets.TensorDataset,
    Subset: datasets.Subset,
    randomSplit: datasets.randomSplit,
    DataLoader,
    defaultCollate,
    Generator,
    gatherRows,
  });
};
