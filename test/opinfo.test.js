// opinfo.test.js - kindling against PyTorch's own test database (OpInfo): every sample recorded
// by tools/opinfo/generate.py (test/fixtures/opinfo) is run on the CPU, and on CUDA when it is
// available (the emulated GPU included): forward values with assert_close tolerances per dtype,
// gradients for PyTorch's grad_outputs, and errors (a call PyTorch rejects must be rejected).
// The failures kindling is known to have are listed, each with its reason, in
// test/opinfo_known_failures.json: a failure not listed there fails, and so does a listed one
// that passes now (remove it). `node tools/opinfo/report.js` prints the pass rates.
'use strict';

const { kd, assert } = require('./helpers');
const { loadAll, loadKnownFailures, runSample } = require('./opinfo_helpers');

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
        for (const id of [...(k.forward || []), ...(k.grad || [])]) assert.ok(ids.get(op).has(id), `${device} ${op}: no sample ${id}`);
      }
    }
  });

  for (const device of devices) {
    describe(device, function () {
      for (const doc of docs) {
        const k = known[device][doc.opinfo] || {};
        const knownFwd = new Set(k.forward || []);
        const knownGrad = new Set(k.grad || []);
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
                const r = kd.tidy(() => runSample(doc, s, device));
                if (r.forward && !knownFwd.has(s.id)) problems.push(`${s.id}: ${r.forward}`);
                if (!r.forward && knownFwd.has(s.id)) problems.push(`${s.id}: listed as a known failure, but passes now`);
                if (r.grad && !knownGrad.has(s.id)) problems.push(`${s.id} gradient: ${r.grad}`);
                if (r.grad === null && knownGrad.has(s.id)) problems.push(`${s.id} gradient: listed as a known failure, but passes now`);
              }
              assert.ok(problems.length === 0, `${doc.opinfo} (kd.${doc.fn}) on ${device}:\n  ${problems.slice(0, 8).join('\n  ')}`);
            });
          }
        });
      }
    });
  }
});
