// nn_conv_pool.test.js - kd.nn convolution, pooling, padding, normalisation and upsampling modules
// beyond those of nn_modules.test.js: parity with PyTorch (test/fixtures/conv_pool_modules.json,
// written by tools/fixtures/conv_pool_modules.py), then call forms, errors, reprs and devices.
'use strict';

const { kd, assert, parityTests } = require('./helpers');
const { moduleParityTests } = require('./module_parity');

const nn = kd.nn;
const F = nn.functional;

describe('kd.nn conv/pool/pad/norm/upsampling modules vs PyTorch', function () {
  moduleParityTests('conv_pool_modules');
});

describe('kd.nn conv/pool/pad/norm/upsampling modules vs PyTorch on CUDA', function () {
  before(function () { if (!kd.cuda.isAvailable()) this.skip(); });
  moduleParityTests('conv_pool_modules', 'cuda');
});

parityTests('conv_pool', 'nn.functional conv3d/convTranspose/fold/pool/norm composites (PyTorch fixtures)');
