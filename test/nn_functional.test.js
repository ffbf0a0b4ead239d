// nn_functional.test.js - the activation, loss, distance, shuffle and embeddingBag functions of
// kd.nn.functional that lib/nn/ composes from ops, against PyTorch 1.13
// (test/fixtures/nn_functional.json, written by tools/fixtures/nn_functional.py): values and
// PyTorch's errors here; the recorded gradients run in autograd_parity.test.js (with gradcheck on
// float64) and every case on the GPU in cuda_parity.test.js.
'use strict';

const { parityTests } = require('./helpers');

parityTests('nn_functional', 'kd.nn.functional compositions (PyTorch fixtures)');
