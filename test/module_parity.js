// module_parity.js - the check of one kd.nn module fixture case (the format of
// tools/fixtures/modules.py): build the module from its spec, load PyTorch's state dict, run the
// forward (on `device`, default the CPU), and compare the outputs, the parameter and input
// gradients of sum(output * gradOutput), and the buffers after the forward with PyTorch's.
// Used by nn_modules.test.js and nn_layers.test.js.
'use strict';

const { kd, assert, fixture, buildArg, values, decode } = require('./helpers');

const RTOL = 1e-5;

function close(t, spec, what) {
  assert.ok(t instanceof kd.Tensor, `${what}: expected a Tensor`);
  assert.deepEqual(t.shape, spec.shape, `${what}: shape`);
  const a = values(t);
  const e = spec.data.map(decode);
  const scale = e.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const atol = 1e-6 * Math.max(1, scale);
  const bad = [];
  for (let i = 0; i < e.length; i++) {
    if (!(Math.abs(a[i] - e[i]) <= atol + RTOL * Math.abs(e[i]))) bad.push(i);
  }
  if (bad.length) assert.fail(`${what}: ${bad.length}/${e.length} differ: ${bad.slice(0, 4).map((i) => `[${i}] got ${a[i]} expected ${e[i]}`).join('; ')}`);
}

function buildModule(s) {
  const C = kd.nn[s.module];
  assert.ok(C, `kd.nn has no ${s.module}`);
  if (s.children) return new C(...s.children.map(buildModule));
  const args = (s.args || []).slice();
  if (s.kwargs) {
    const kw = {};
    for (const [k, v] of Object.entries(s.kwargs)) kw[k] = buildArg(v);
    args.push(kw);
  }
  return new C(...args);
}

/** Checks one layer case against PyTorch's values, with the module and inputs on `device`. */
function checkModuleCase(c, device = 'cpu') {
  const on = (t) => (t instanceof kd.Tensor && device !== 'cpu' ? t.to(device) : t);
  const m = buildModule(c.spec);
  const sd = {};
  for (const [k, v] of Object.entries(c.state)) sd[k] = buildArg(v);
  m.loadStateDict(sd);
  if (device !== 'cpu') m.to(device);
  m.train(c.train);
  const xs = c.inputs.map((s) => {
    const t = on(buildArg(s));
    return ['float32', 'float64'].includes(t.dtype) ? t.detach().requiresGrad_() : t;
  });
  const fkw = {};
  for (const [k, v] of Object.entries(c.forwardKwargs || {})) fkw[k] = on(buildArg(v));
  const r = c.forwardKwargs ? m(...xs, fkw) : m(...xs);
  const outs = c.tuple ? r : [r];
  assert.equal(outs.length, c.output.length, 'number of outputs');
  const os = [];
  const gos = [];
  c.output.forEach((e, k) => {
    if (e === null) { assert.equal(outs[k], null, `output ${k}`); return; }
    close(outs[k], e, `output ${k}`);
    if (c.gradOutputs[k]) { os.push(outs[k]); gos.push(on(buildArg(c.gradOutputs[k]))); }
  });
  if (os.length) kd.autograd.backward(os, gos);
  const params = new Map(m.namedParameters());
  for (const [k, e] of Object.entries(c.grads)) {
    assert.ok(params.has(k), `parameter ${k}`);
    assert.ok(params.get(k).grad !== null, `gradient of ${k}`);
    close(params.get(k).grad, e, `gradient of ${k}`);
  }
  for (const [k, p] of params) if (!(k in c.grads)) assert.equal(p.grad, null, `${k} has a gradient, PyTorch has none`);
  c.inputGrads.forEach((e, i) => {
    if (e) close(xs[i].grad, e, `gradient of input ${i}`);
  });
  if (c.buffersAfter) {
    const bufs = new Map(m.namedBuffers());
    for (const [k, e] of Object.entries(c.buffersAfter)) close(bufs.get(k), e, `buffer ${k} after forward`);
  }
}

/** An it() per layer case of fixture `family` (its `layers`), under `title`, on `device`. */
function moduleParityTests(family, title, device = 'cpu') {
  describe(title, function () {
    for (const c of fixture(family).layers) it(c.name, function () { checkModuleCase(c, device); });
  });
}

module.exports = { close, buildModule, checkModuleCase, moduleParityTests };
