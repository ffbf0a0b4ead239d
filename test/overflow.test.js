// overflow.test.js - sizes, strides, offsets and integer arguments at the int64 extremes: every
// shape computation is overflow-checked (Note [Checked shape arithmetic] in src/core/shape.h),
// so each call below is either PyTorch 1.13's error or the exact answer. The expected values
// were computed with PyTorch 1.13.1; where PyTorch itself overflows (tril/triu/slice/chunk/arange
// with a huge argument silently give a wrong answer there), the expected value is the exact one,
// stated in a comment.
'use strict';

const { kd, assert, expectKdError } = require('./helpers');

const MAX = 2n ** 63n - 1n;
const MIN = -(2n ** 63n);
const ints = (t) => Array.from(t.to('int64').dataSync(), (x) => BigInt(x));

describe('int64 overflow in shape arithmetic', function () {
  it('asStrided: a stride whose extent overflows is an error, not a write past the storage', function () {
    const t = kd.ones([4]);
    const err = expectKdError(() => t.asStrided([3], [2n ** 62n + 1024n]).fill_(7), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'Storage size calculation overflowed with sizes=[3] and strides=[4611686018427388928]');
    expectKdError(() => t.asStrided([2n ** 62n, 2], [2, 2n ** 62n]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => t.asStrided([2], [1], MAX), 'KD_INVALID_ARGUMENT'); // offset + extent overflows
    assert.deepEqual(Array.from(t.dataSync()), [1, 1, 1, 1]);
  });

  it('narrow: start + length past int64 is PyTorch\'s bounds error', function () {
    const err = expectKdError(() => kd.ones([4]).narrow(0, 1, MAX), 'KD_INDEX_OUT_OF_RANGE');
    assert.equal(err.message, 'start (1) + length (9223372036854775807) exceeds dimension size (4).');
  });

  it('tril/triu with a diagonal at the int64 extremes', function () {
    const m = kd.ones([3, 3]);
    // exact answers (PyTorch 1.13 returns all zeros for tril(2^63-1) and the lower part for triu(2^63-1))
    assert.deepEqual(Array.from(m.tril(MAX).dataSync()), [1, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(Array.from(m.triu(MAX).dataSync()), [0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(Array.from(m.tril(MIN).dataSync()), [0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(Array.from(m.triu(MIN).dataSync()), [1, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(Array.from(m.clone().tril_(MAX).dataSync()), [1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('arange at the int64 extremes', function () {
    const err = expectKdError(() => kd.arange(MIN, MAX, { dtype: 'int64' }), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'invalid size, possible overflow?');
    assert.deepEqual(ints(kd.arange(MAX - 2n, MAX, { dtype: 'int64' })), [MAX - 2n, MAX - 1n]);
    assert.deepEqual(ints(kd.arange(MIN, MIN + 3n, { dtype: 'int64' })), [MIN, MIN + 1n, MIN + 2n]);
    assert.deepEqual(ints(kd.arange(MAX, MAX - 3n, -1, { dtype: 'int64' })), [MAX, MAX - 1n, MAX - 2n]);
    // exact answers (PyTorch 1.13 returns empty tensors for these three)
    assert.deepEqual(ints(kd.arange(0, 10, MAX, { dtype: 'int64' })), [0n]);
    assert.deepEqual(ints(kd.arange(10, 0, MIN, { dtype: 'int64' })), [10n]);
    assert.deepEqual(ints(kd.arange(MIN, MAX, 2n ** 62n, { dtype: 'int64' })), [MIN, -(2n ** 62n), 0n, 2n ** 62n]);
  });

  it('slice with a huge step or bounds', function () {
    const t = kd.arange(10, { dtype: 'float32' });
    // exact answer (PyTorch 1.13 returns an empty tensor)
    assert.deepEqual(Array.from(t.slice(0, 0, 10, MAX).dataSync()), [0]);
    assert.deepEqual(Array.from(t.slice(0, 1, 10, 2n ** 62n).dataSync()), [1]);
    assert.deepEqual(Array.from(t.slice(0, 2, MAX).dataSync()), [2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(Array.from(t.slice(0, MIN, 3).dataSync()), [0, 1, 2]);
    const s = t.reshape([5, 2]).t().slice(1, 1, 5, MAX); // stride 2 * step does not fit
    assert.deepEqual(s.shape, [2, 1]);
    assert.deepEqual(Array.from(s.contiguous().dataSync()), [2, 3]);
  });

  it('chunk and split with a huge count or size', function () {
    // exact answer (PyTorch 1.13: "split_size can only be 0 if dimension size is 0")
    const parts = kd.arange(10, { dtype: 'float32' }).chunk(MAX);
    assert.equal(parts.length, 10);
    parts.forEach((p, i) => assert.deepEqual(Array.from(p.dataSync()), [i]));
    const whole = kd.arange(10, { dtype: 'float32' }).split(MAX);
    assert.equal(whole.length, 1);
    assert.deepEqual(whole[0].shape, [10]);
  });

  it('unfold and unsqueeze keep the strides of size-1 dims inside int64', function () {
    const t = kd.arange(8, { dtype: 'float32' }).reshape([4, 2]).t(); // strides [1, 2]
    const u = t.unfold(1, 2, MAX);
    assert.deepEqual(u.shape, [2, 1, 2]);
    assert.deepEqual(Array.from(u.contiguous().dataSync()), [0, 2, 1, 3]);
    const big = kd.ones([4]).asStrided([1], [MAX]);
    assert.deepEqual(big.unsqueeze(0).shape, [1, 1]);
  });

  it('factories and shape ops: PyTorch\'s overflow errors', function () {
    let err = expectKdError(() => kd.zeros([2n ** 62n, 4]), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'Storage size calculation overflowed with sizes=[4611686018427387904, 4]');
    err = expectKdError(() => kd.full([2n ** 62n, 4], 1), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'Storage size calculation overflowed with sizes=[4611686018427387904, 4]');
    expectKdError(() => kd.zeros([2n ** 32n, 2n ** 32n]), 'KD_INVALID_ARGUMENT');
    err = expectKdError(() => kd.ones([1]).expand(2n ** 62n, 4), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'numel: integer multiplication overflow');
    expectKdError(() => kd.ones([2]).repeat(2n ** 62n, 4), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.ones([0]).reshape(2n ** 62n, 4, 0), 'KD_INVALID_ARGUMENT');
    assert.deepEqual(kd.zeros([0, 2n ** 62n, 4]).shape, [0, 2 ** 62, 4]);
    err = expectKdError(() => kd.ones([4]).narrow(0, MIN, 1), 'KD_INDEX_OUT_OF_RANGE');
    err = expectKdError(() => kd.ones([4]).select(0, MIN), 'KD_INDEX_OUT_OF_RANGE');
    assert.equal(err.message, 'select(): index -9223372036854775808 out of range for tensor of size [4] at dimension 0');
    assert.deepEqual(Array.from(kd.arange(4, { dtype: 'float32' }).roll(MAX).dataSync()), [1, 2, 3, 0]);
    assert.deepEqual(Array.from(kd.arange(4, { dtype: 'float32' }).roll(MIN).dataSync()), [0, 1, 2, 3]);
    assert.deepEqual(kd.ones([3, 3]).diagonal(MAX).shape, [0]);
    assert.deepEqual(kd.ones([3, 3]).diagonal(MIN).shape, [0]);
  });

  // Found by calling every op with int64-extreme integers under UBSan; PyTorch 1.13 overflows
  // silently in several of these (conv1d with dilation 2^63-1 returns a [1, 1, 7] tensor; a
  // split whose sizes wrap around to the dimension size succeeds).
  it('ops whose sizes come from integer arguments: errors instead of wrapped sizes', function () {
    let err = expectKdError(() => kd.ones([3]).repeat(MAX), 'KD_INVALID_ARGUMENT');
    assert.match(err.message, /^Storage size calculation overflowed/);
    expectKdError(() => kd.ones([3]).repeat(MIN), 'KD_INVALID_ARGUMENT');
    err = expectKdError(() => kd.ones([3]).diag(MAX), 'KD_INVALID_ARGUMENT');
    assert.match(err.message, /^Storage size calculation overflowed/);
    expectKdError(() => kd.ones([3]).diag(MIN), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.ones([3]).repeatInterleave(MAX), 'KD_INVALID_ARGUMENT');
    err = expectKdError(() => kd.ones([3]).split([MAX, MAX, 5n]), 'KD_SHAPE_MISMATCH');
    assert.match(err.message, /^split_with_sizes expects split_sizes to sum exactly to 3/);
    const x = kd.ones([1, 1, 5]), w = kd.ones([1, 1, 3]);
    expectKdError(() => kd.nn.functional.conv1d(x, w, null, 1, 0, MAX), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.nn.functional.conv1d(x, w, null, 1, MAX), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.ones([4]).asStrided([0], [1], 2n ** 62n), 'KD_INVALID_ARGUMENT'); // offset * itemsize
    assert.deepEqual(kd.ones([4]).asStrided([0], [1], 10).shape, [0]); // an empty view past the end, as in PyTorch
  });

  it('internal backward ops validate their integer arguments', function () {
    // a repeated dim left part of the inverse permutation unset (an uninitialised read)
    const err = expectKdError(() => kd._internal.permuteBackward(kd.ones([2, 3]), [0, 0]), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'permute(): duplicate dims are not allowed.');
    expectKdError(() => kd._internal.embeddingBackward(kd.ones([2, 3]), kd.zeros([2], { dtype: 'int64' }), [MIN, 3], MIN),
      'KD_INVALID_ARGUMENT');
    expectKdError(() => kd._internal.asStridedBackward(kd.ones([2]), [2], [1], MIN, [2], [1], 0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd._internal.asStridedBackward(kd.ones([2]), [2], [MAX], 0, [2], [1], 0), 'KD_INVALID_ARGUMENT');
    // the count of reduced elements of sizes whose product wraps (found by the API fuzzer under UBSan)
    for (const op of ['sumBackward', 'meanBackward']) {
      expectKdError(() => kd._internal[op](kd.ones([]), [2 ** 32, 2 ** 32, 0], null, false), 'KD_INVALID_ARGUMENT', op);
      expectKdError(() => kd._internal[op](kd.ones([0]), [0, 2 ** 32, 2 ** 32], [1, 2], false), 'KD_INVALID_ARGUMENT', op);
    }
    assert.deepEqual(kd._internal.meanBackward(kd.ones([]), [0, 2 ** 32, 2 ** 32], null, false).shape, [0, 2 ** 32, 2 ** 32]);
  });

  it('empty tensors with sizes whose product overflows', function () {
    const z = kd.zeros([0, 2n ** 62n, 4]);
    assert.deepEqual(z.stride(), [0, 4, 1]); // PyTorch 1.13's strides for this shape
    assert.deepEqual(z.add(1).shape, [0, 2 ** 62, 4]);
    assert.equal(z.sum().item(), 0);
  });
});
