// oplist/random.js - random sampling beyond rand/randn/randint: randperm, multinomial, bernoulli,
// normal (PyTorch's four overloads), poisson and the in-place fillers (uniform_, normal_,
// bernoulli_, exponential_, random_, geometric_, cauchy_, logNormal_). All draw from kindling's one
// generator, Philox4x32-10 on every device (see Note [Random distributions] in src/core/random.h):
// after kd.manualSeed(s) an op gives the same numbers on the CPU and on CUDA. Gradients as
// PyTorch's derivatives.yaml: zero for normal's mean/std, bernoulli's and poisson's inputs and
// the fillers' self. Part of the op list (see ./index.js).
'use strict';

const T = 'Tensor';
const ZERO_SELF = { self: 'zerosLike(grad)' };
const PHILOX = '(Philox4x32-10 on every device: the same numbers on the CPU and CUDA for the same manualSeed)';

// An in-place filler: Tensor method `<name>_` only, one generic kernel selected by code.
const filler = (name, args, code, doc, extra = {}) => ({
  name, args: `Tensor self${args ? ', ' + args : ''}`, returns: T, variants: ['inplace'], inplaceOnly: true,
  kind: 'random', code, generic: 'kd_random_filler', backward: ZERO_SELF, doc: `${doc} ${PHILOX}.`, ...extra,
});

module.exports = [
  { name: 'randperm', args: 'int n, *, dtype? dtype, device? device', returns: T, variants: ['function'],
    kind: 'factory', generic: 'kd_random_randperm',
    doc: `A random permutation of 0..n-1 (int64 unless dtype says otherwise): the stable order of n random 64-bit keys ${PHILOX}.` },
  { name: 'multinomial', args: 'Tensor self, int numSamples, bool replacement=false', returns: T,
    variants: ['function', 'method'], kind: 'random', generic: 'kd_random_multinomial', flags: ['nondiff'],
    doc: `numSamples category indices per row of the probabilities self (1-D or 2-D, unnormalised), with or without replacement ${PHILOX}.` },
  { name: 'bernoulli', args: 'Tensor self', returns: T, variants: ['function', 'method'], kind: 'random',
    code: 'KD_RANDFILL_BERNOULLI_TENSOR', generic: 'kd_random_filler', backward: ZERO_SELF,
    doc: `1 with probability self (each element in [0, 1]), else 0, in self's dtype ${PHILOX}.` },
  { name: 'bernoulli.p', args: 'Tensor self, *, float p', returns: T, variants: ['function', 'method'], kind: 'random',
    code: 'KD_RANDFILL_BERNOULLI', generic: 'kd_random_filler', flags: ['nondiff'],
    doc: `1 with probability p, else 0, in self's shape and dtype ${PHILOX}.` },
  { name: 'poisson', args: 'Tensor self', returns: T, variants: ['function'], kind: 'random',
    code: 'KD_RANDFILL_POISSON', generic: 'kd_random_filler', backward: { self: 'zerosLike(self)' },
    doc: `Poisson counts with the rates self (>= 0), in self's floating dtype ${PHILOX}.` },
  { name: 'normal.Tensor_Tensor', args: 'Tensor mean, Tensor std', returns: T, variants: ['function'], kind: 'random',
    code: 'KD_RANDNORMAL_TT', generic: 'kd_random_normal',
    backward: { mean: 'zerosLike(mean)', std: 'zerosLike(std)' },
    doc: `Normal samples with elementwise mean and std (broadcast; std >= 0), in mean's dtype ${PHILOX}.` },
  { name: 'normal.Tensor_float', args: 'Tensor mean, float std=1', returns: T, variants: ['function'], kind: 'random',
    code: 'KD_RANDNORMAL_TF', generic: 'kd_random_normal', backward: { mean: 'zerosLike(mean)' },
    doc: `Normal samples with elementwise mean and one std ${PHILOX}.` },
  { name: 'normal.float_Tensor', args: 'float mean, Tensor std', returns: T, variants: ['function'], kind: 'random',
    code: 'KD_RANDNORMAL_FT', generic: 'kd_random_normal', backward: { std: 'zerosLike(std)' },
    doc: `Normal samples with one mean and elementwise std ${PHILOX}.` },
  { name: 'normal.float_float', args: 'float mean, float std, int[] size, *, dtype? dtype, device? device', returns: T,
    variants: ['function'], kind: 'factory', code: 'KD_RANDNORMAL_FF', generic: 'kd_random_normal',
    doc: `Normal samples of the given size with one mean and std ${PHILOX}.` },

  filler('uniform', 'float from=0, float to=1', 'KD_RANDFILL_UNIFORM', 'Fills self with uniform numbers in [from, to) (floating dtypes).'),
  filler('normal', 'float mean=0, float std=1', 'KD_RANDFILL_NORMAL', 'Fills self with normal numbers (floating dtypes).'),
  filler('bernoulli.Tensor', 'Tensor p', 'KD_RANDFILL_BERNOULLI_TENSOR',
    'Fills self with 1 with probability p (a tensor broadcast to self, each in [0, 1]), else 0.',
  { backward: { self: 'zerosLike(grad)', p: 'zerosLike(p)' } }),
  filler('bernoulli.float', 'float p=0.5', 'KD_RANDFILL_BERNOULLI', 'Fills self with 1 with probability p, else 0.'),
  filler('exponential', 'float lambd=1', 'KD_RANDFILL_EXPONENTIAL', 'Fills self with exponential numbers of rate lambd (floating dtypes).'),
  filler('random', '', 'KD_RANDFILL_RANDOM', 'Fills self with integers in [0, 2^mantissa] (floats) or [0, max] (integers).'),
  filler('random.to', 'int to', 'KD_RANDFILL_RANDOM_TO', 'Fills self with integers in [0, to).'),
  filler('random.from', 'int from, int? to', 'KD_RANDFILL_RANDOM_FROM', 'Fills self with integers in [from, to) (to left out: up to the dtype\'s largest).'),
  filler('geometric', 'float p', 'KD_RANDFILL_GEOMETRIC', 'Fills self with the number of Bernoulli(p) trials to the first success (>= 1).'),
  filler('cauchy', 'float median=0, float sigma=1', 'KD_RANDFILL_CAUCHY', 'Fills self with Cauchy numbers (floating dtypes).'),
  filler('logNormal', 'float mean=1, float std=2', 'KD_RANDFILL_LOG_NORMAL', 'Fills self with exp of normal numbers of mean and std (floating dtypes).'),
];
