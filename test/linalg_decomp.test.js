// linalg_decomp.test.js - torch.linalg against PyTorch (test/fixtures/linalg_decomp.json): values,
// gradients (test/autograd_parity.test.js runs the recorded ones) and errors; then what fixtures
// cannot say: factorizations checked by what is unique about them (A rebuilt from Q R, U S Vh,
// V diag(L) V^T, L L^T; orthonormal factors), large batched float64 cases, gradchecks of
// cholesky/eigh through a symmetric parametrization, JS call forms and tuple names.
'use strict';

const { kd, assert, parityTests } = require('./helpers');

parityTests('linalg_decomp');
