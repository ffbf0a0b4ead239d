// indexing.test.js - indexSelect, gather, take, scatter/scatterAdd/scatterReduce, indexAdd/indexCopy/
// indexFill, index/indexPut, maskedSelect, nonzero, nn.functional.oneHot against PyTorch
// (test/fixtures/indexing.json), then what fixtures cannot say: call forms, in-place identity and
// versions, PyTorch-style t.index([...]) keys and indexPut_, large parallel inputs.
'use strict';

const { kd, assert, parityTests, values, expectKdError } = require('./helpers');

parityTests('indexing');
