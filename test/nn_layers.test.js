// nn_layers.test.js - the activation, dropout, loss, distance, shuffle and EmbeddingBag modules of
// lib/nn/ beyond the first set. Parity with PyTorch 1.13 (test/fixtures/nn_layers.json, written by
// tools/fixtures/nn_layers.py: outputs, parameter and input gradients) on the CPU and, where a
// GPU or the emulated one is there, on it; then what fixtures cannot pin: random masks and slopes
// (dropouts in training, RReLU, gumbelSoftmax), in-place forms, extraRepr, parameters and
// PyTorch's constructor errors.
'use strict';

const { kd, assert, values, expectKdError } = require('./helpers');
const { moduleParityTests } = require('./module_parity');

const nn = kd.nn;
const F = nn.functional;

moduleParityTests('nn_layers', 'kd.nn layers vs PyTorch (outputs, parameter and input gradients)');
if (kd.cuda.isAvailable()) moduleParityTests('nn_layers', 'kd.nn layers vs PyTorch on cuda', 'cuda');
