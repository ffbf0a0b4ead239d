// random_ops.test.js - the random ops of src/ops/oplist/random.js against PyTorch's errors and its
// draw-independent values (test/fixtures/random_ops.json).
'use strict';

const { parityTests } = require('./helpers');

parityTests('random_ops');
