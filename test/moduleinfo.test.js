// moduleinfo.test.js - kindling's modules against PyTorch's own module test database (ModuleInfo):
// every sample recorded by tools/opinfo/generate_modules.py (test/fixtures/moduleinfo) is run on
// the CPU, and on CUDA when it is available (the emulated GPU included): kd.nn.<Module> built
// with the sample's constructor arguments and PyTorch's state dict, its outputs, the buffers the
// forward changed and the gradients of inputs and parameters compared with PyTorch's. A module
// kindling does not have yet is reported as missing (a pending test), not failed; once it exists
// its samples run. Known failures, each with its reason, are listed in
// test/moduleinfo_known_failures.json, with the OpInfo harness's rules (a failure not listed
// fails, a listed one that passes now fails, mayDiffer for nondeterministic samples).
// `npm run moduleinfo:report` prints the pass rates per module.
'use strict';

const { kd, assert } = require('./helpers');
const { sampleProblems } = require('./opinfo_helpers');
const { loadAll, loadKnownFailures, hasModule, runModuleSample } = require('./moduleinfo_helpers');

const docs = loadAll();
const known = loadKnownFailures();
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];

describe('ModuleInfo parity (PyTorch module_db samples)', function () {
  it('has the recorded fixtures of all 38 module_db entries, and the known failures name recorded samples', function () {
    assert.strictEqual(docs.length, 38);
    const ids = new Map(docs.map((d) => [d.module, new Set(d.samples.map((s) => s.id))]));
    for (const device of ['cpu', 'cuda']) {
      for (const [mod, k] of Object.entries(known[device])) {
        assert.ok(ids.has(mod), `${device}: known failures list ${mod}, which has no fixture`);
        assert.ok(typeof k.reason === 'string' && k.reason.length > 10 && !k.reason.startsWith('TODO'), `${device} ${mod}: no reason given`);
        const may = k.mayDiffer || {};
        for (const id of [...(k.forward || []), ...(k.grad || []), ...(may.forward || []), ...(may.grad || [])]) assert.ok(ids.get(mod).has(id), `${device} ${mod}: no sample ${id}`);
      }
    }
  });

  it('fails a module whose parameters differ from the state dict it was given', function () {
    const doc = docs.find((d) => d.module === 'Bilinear');
    const s = doc.samples.find((x) => x.grads && x.state.bias);
    const b = Buffer.from(s.state.bias.b64, 'base64');
    b.writeFloatLE(b.readFloatLE(0) + 1e-3, 0);
    const bad = { ...s, state: { ...s.state, bias: { ...s.state.bias, b64: b.toString('base64') } } };
    assert.strictEqual(kd.tidy(() => runModuleSample(doc, s)).forward, null);
    assert.match(kd.tidy(() => runModuleSample(doc, bad)).forward, /values differ/);
  });

  it('a nondeterministic sample compares shapes only; a module kindling lacks is missing, not failed', function () {
    const doc = docs.find((d) => d.module === 'ReLU');
    const s = doc.samples.find((x) => x.out.shape.length === 4);
    const zeros = { ...s.out, b64: Buffer.alloc(Buffer.from(s.out.b64, 'base64').length).toString('base64') };
    const random = { ...s, out: zeros, random: true, grads: undefined, gradOutputs: undefined, paramGrads: undefined };
    assert.deepStrictEqual(kd.tidy(() => runModuleSample(doc, random)), { forward: null, grad: undefined });
    assert.match(kd.tidy(() => runModuleSample(doc, { ...random, random: false })).forward, /values differ/);
    assert.match(kd.tidy(() => runModuleSample(doc, { ...random, out: { ...zeros, shape: [1, ...zeros.shape] } })).forward, /shape/);
    assert.deepStrictEqual(runModuleSample({ ...doc, module: 'NoSuchModule' }, s), { missing: true });
  });

  for (const device of devices) {
    describe(device, function () {
      for (const doc of docs) {
        const k = known[device][doc.module] || {};
        describe(doc.module, function () {
          if (!hasModule(doc)) {
            it(`kd.nn.${doc.module} is missing (${doc.samples.length} samples wait for it)`);
            return;
          }
          const byDtype = new Map();
          for (const s of doc.samples) {
            const g = s.id.replace(/\/\d+$/, '');
            if (!byDtype.has(g)) byDtype.set(g, []);
            byDtype.get(g).push(s);
          }
          for (const [group, samples] of byDtype) {
            it(`${group} (${samples.length} samples)`, function () {
              const problems = [];
              for (const s of samples) {
                problems.push(...sampleProblems(k, s.id, kd.tidy(() => runModuleSample(doc, s, device))).map((p) => `${p} [${s.desc}]`));
              }
              assert.ok(problems.length === 0, `${doc.module} on ${device}:\n  ${problems.slice(0, 8).join('\n  ')}`);
            });
          }
        });
      }
    });
  }
});
