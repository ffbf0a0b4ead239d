// oplist/creation.js - factories: empty/zeros/ones/full/arange/linspace/eye/random and the *Like forms. Part of the op list (see ./index.js).
'use strict';

const { factory, like } = require('./define');

module.exports = [
  factory('empty', 'int[] size, *, dtype? dtype, device? device', 'A tensor with uninitialised data.',
    { generic: 'kd_factory_empty' }),
  factory('zeros', 'int[] size, *, dtype? dtype, device? device', 'A tensor filled with 0.',
    { composite: 'kd_factory_fill', code: 'KD_FILL_ZEROS' }),
  factory('ones', 'int[] size, *, dtype? dtype, device? device', 'A tensor filled with 1.',
    { composite: 'kd_factory_fill', code: 'KD_FILL_ONES' }),
  factory('full', 'int[] size, Scalar fillValue, *, dtype? dtype, device? device',
    'A tensor filled with fillValue (dtype inferred from it when not given).',
    { composite: 'kd_factory_fill', code: 'KD_FILL_VALUE' }),
  factory('arange', 'Scalar start, Scalar? end, Scalar step=1, *, dtype? dtype, device? device',
    'Values from start (inclusive) to end (exclusive) by step; arange(end) counts from 0.',
    { cpu: 'kd_cpu_arange' }),
  factory('linspace', 'Scalar start, Scalar end, int steps, *, dtype? dtype, device? device',
    'steps values evenly spaced from start to end inclusive.', { cpu: 'kd_cpu_linspace' }),
  factory('eye', 'int n, int? m, *, dtype? dtype, device? device', 'A 2-D tensor with ones on the diagonal.',
    { composite: 'kd_factory_eye' }),
  factory('rand', 'int[] size, *, dtype? dtype, device? device', 'Uniform random numbers in [0, 1) (Philox4x32-10).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_UNIFORM' }),
  factory('randn', 'int[] size, *, dtype? dtype, device? device', 'Standard normal random numbers (Philox4x32-10).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_NORMAL' }),
  factory('randint', 'int low, int high, int[] size, *, dtype? dtype, device? device',
    'Random integers in [low, high) (int64 unless dtype says otherwise).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_INT' }),
  like('emptyLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_EMPTY', 'empty() with the shape of self.'),
  like('zerosLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_ZEROS', 'zeros() with the shape of self.'),
  like('onesLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_ONES', 'ones() with the shape of self.'),
  like('fullLike', 'Tensor self, Scalar fillValue, *, dtype? dtype, device? device', 'KD_LIKE_FULL',
    'full() with the shape of self.'),
  like('randLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_RAND', 'rand() with the shape of self.'),
  like('randnLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_RANDN', 'randn() with the shape of self.'),
  like('randintLike', 'Tensor self, int low, int? high, *, dtype? dtype, device? device', 'KD_LIKE_RANDINT',
    'randint() with the shape of self; randintLike(self, high) draws from [0, high), as PyTorch.'),
];
