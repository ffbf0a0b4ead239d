// opinfo.test.js - kindling against PyTorch's own test database (OpInfo): every sample recorded
// by tools/opinfo/generate.py (test/fixtures/opinfo) is run on the CPU, and on CUDA when it is
// available (the emulated GPU included): forward values with assert_close tolerances per dtype,
// gradients for PyTorch's grad_outputs, and errors (a call PyTorch rejects must be rejected).
// The failures kindling is known to have are listed, each with its reason, in
// test/opinfo_known_failures.json: a failure not listed there fails, and so does a listed one
// that passes now (remove it). A nondeterministic sample (which of duplicate writes wins) is
// listed under `mayDiffer` instead: it may pass or differ in values, and fails any other way.
// `node tools/opinfo/report.js` prints the pass rates.
'use strict';

const { kd, assert } = require('./helpers');
const { loadAll, loadKnownFailures, runSample, sampleProblems } = require('./opinfo_helpers');

const docs = loadAll();
const known = loadKnownFailures();
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];

describe('OpInfo parity (PyTorch op_db samples)', function () {
  it('has the recorded fixtures, and the known failures name recorded samples', function () {
    assert.ok(docs.length > 200, `only ${docs.length} OpInfos recorded`);
    const ids = new Map(docs.map((d) => [d.opinfo, new Set(d.samples.map((s) => s.id))]));
    for (const device of ['cpu', 'cuda']) {
      for (const [op, k] of Object.entries(known[device])) {
        assert.ok(ids.has(op), `${device}: known failures list ${op}, which has no fixture`);
        assert.ok(typeof k.reason === 'string' && k.reason.length > 10 && !k.reason.startsWith('TODO'), `${device} ${op}: no reason given`);
        const may = k.mayDiffer || {};
        for (const id of [...(k.forward || []), ...(k.grad || []), ...(may.forward || []), ...(may.grad || [])]) assert.ok(ids.get(op).has(id), `${device} ${op}: no sample ${id}`);
        for (const kind of ['forward', 'grad']) {
          for (const id of may[kind] || []) assert.ok(!(k[kind] || []).includes(id), `${device} ${op}: ${id} is both a known failure and may differ (${kind})`);
        }
      }
    }
  });

  it('a nondeterministic sample (mayDiffer) may pass or differ in values; a listed one must fail; other samples stay checked', function () {
    const k = { reason: 'which duplicate write wins', forward: ['float32/1'], mayDiffer: { forward: ['float64/0'], grad: ['float64/0'] } };
    const differs = 'output: 2/25 values differ (float64): [18] 8.2 vs 4.6';
    assert.deepStrictEqual(sampleProblems(k, 'float64/0', { forward: null, grad: null }), [], 'passing');
    assert.deepStrictEqual(sampleProblems(k, 'float64/0', { forward: differs, grad: 'forward differs' }), [], 'differing');
    assert.deepStrictEqual(sampleProblems(k, 'float64/0', { forward: null, grad: 'grad[0]: 1/25 values differ (float64): [3] 1 vs 2' }), []);
    assert.strictEqual(sampleProblems(k, 'float64/0', { forward: 'output: shape [5], expected [4]', grad: 'forward differs' }).length, 1, 'a wrong shape is no nondeterminism');
    assert.strictEqual(sampleProblems(k, 'float64/0', { forward: 'forward threw KD_INTERNAL: x' }).length, 1, 'nor is an error');
    assert.strictEqual(sampleProblems(k, 'float64/1', { forward: differs }).length, 1, 'another sample of the same OpInfo');
    assert.match(sampleProblems(k, 'float32/1', { forward: null })[0], /passes now/);
    assert.deepStrictEqual(sampleProblems(k, 'float32/1', { forward: differs }), []);
    assert.deepStrictEqual(sampleProblems({}, 'int64/0', { forward: null, grad: undefined }), []);
  });

  for (const device of devices) {
    describe(device, function () {
      for (const doc of docs) {
        const k = known[device][doc.opinfo] || {};
        const byDtype = new Map();
        for (const s of doc.samples) {
          const g = s.dtype || 'errors';
          if (!byDtype.has(g)) byDtype.set(g, []);
          byDtype.get(g).push(s);
        }
        describe(doc.opinfo, function () {
          for (const [dtype, samples] of byDtype) {
            it(`${dtype} (${samples.length} samples)`, function () {
              const problems = [];
              for (const s of samples) {
                problems.push(...sampleProblems(k, s.id, kd.tidy(() => runSample(doc, s, device))));
              }
              assert.ok(problems.length === 0, `${doc.opinfo} (kd.${doc.fn}) on ${device}:\n  ${problems.slice(0, 8).join('\n  ')}`);
            });
          }
        });
      }
    });
  }
});
