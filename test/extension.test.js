// extension.test.js - C extensions (include/kindling.h) through kd.utils.cppExtension.load: the
// example extension (examples/extension/scaled_tanh.c, a fused op whose backward is a fused C op)
// compiled into a fresh cache dir, its values against Math.tanh, gradcheck, a C op with a JS
// backward (gradgradcheck), the cache (same process, another process), errors (a kernel's error
// code, compile errors, no entry point, a failing init, a mismatched backward op, .cu sources) and
// that calls leave no tensor behind.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { kd, assert, collectGarbage } = require('./helpers');

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-ext-'));
const code = (c) => (e) => { assert.equal(e.code, c, e.message); return true; };

function writeSource(name, text) {
  const file = path.join(cacheDir, `${name}.c`);
  fs.writeFileSync(file, text);
  return file;
}

describe('kd.utils.cppExtension', function () {
  this.timeout(120000);
  let saved;
  let ext;
  before(function () {
    saved = process.env.KINDLING_EXTENSIONS_DIR;
    process.env.KINDLING_EXTENSIONS_DIR = cacheDir;
    ext = require('../examples/extension/run.js').loadScaledTanh();
  });
  after(function () {
    if (saved === undefined) delete process.env.KINDLING_EXTENSIONS_DIR;
    else process.env.KINDLING_EXTENSIONS_DIR = saved;
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it('compiles the example into the cache dir and registers its ops', function () {
    assert.equal(ext.built, true);
    assert.equal(path.dirname(ext.path), cacheDir);
    assert.ok(fs.existsSync(ext.path));
    assert.deepEqual(Object.keys(ext.ops).sort(), ['scaled_tanh', 'scaled_tanh_backward']);
    assert.equal(kd.ops.extdemo.scaled_tanh, ext.ops.scaled_tanh);
  });

  it('forward values match Math.tanh (float64 and float32)', function () {
    const v = [-2, -0.5, 0, 0.25, 3];
    const y = kd.ops.extdemo.scaled_tanh(kd.tensor(v, { dtype: 'float64' }), 1.5);
    Array.from(y.dataSync()).forEach((g, i) => assert.ok(Math.abs(g - Math.tanh(1.5 * v[i])) < 1e-15));
    const y32 = kd.ops.extdemo.scaled_tanh(kd.tensor(v));
    assert.equal(y32.dtype, 'float32');
    Array.from(y32.dataSync()).forEach((g, i) => assert.ok(Math.abs(g - Math.tanh(v[i])) < 1e-6));
  });

  it('gradcheck through the C backward op; the node is named after the op', function () {
    kd.manualSeed(1);
    const x = kd.randn([6], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => kd.ops.extdemo.scaled_tanh(t, 0.7), [x]));
    const y = kd.ops.extdemo.scaled_tanh(x, 0.7);
    assert.equal(y.gradFn.name, 'extdemo::scaled_tanhBackward');
  });

  it('is cached: the same module in this process, no compile in another', function () {
    const again = kd.utils.cppExtension.load({ name: 'scaled_tanh', sources: [path.join(__dirname, '..', 'examples', 'extension', 'scaled_tanh.c')] });
    assert.equal(again, ext);
    const script = `const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      const m = require(${JSON.stringify(path.join(__dirname, '..', 'examples', 'extension', 'run.js'))}).loadScaledTanh();
      process.stdout.write(JSON.stringify({ built: m.built, path: m.path, y: kd.ops.extdemo.scaled_tanh(kd.ones([1], { dtype: 'float64' })).item() }));`;
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, KINDLING_EXTENSIONS_DIR: cacheDir, CC: 'false' }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out, { built: false, path: ext.path, y: Math.tanh(1) });
  });

  it('a C op can take its backward from JS instead (registerAutograd)', function () {
    const src = writeSource('square', `#include <kindling.h>
static const kindling_api *kd;
static int square(kd_op_call *c) {
  kd_tensor *x = kd->arg_tensor(c, 0);
  if (kd->dtype(x) != KD_FLOAT64 || !kd->is_contiguous(x)) return kd->error(KD_ERROR_DTYPE, "square: float64 only");
  kd_tensor *y = kd->new_output(c, 0, kd->sizes(x), kd->ndim(x), KD_FLOAT64);
  if (!y) return kd->last_status();
  const double *in = kd->data(x); double *out = kd->data(y);
  for (int64_t i = 0; i < kd->numel(x); i++) out[i] = in[i] * in[i];
  return KD_SUCCESS;
}
int kindling_extension_init(const kindling_api *api) {
  int op; kd = api;
  return kd->define("extjs::square(Tensor x) -> Tensor", &op) || kd->impl(op, KD_DEVICE_TYPE_CPU, square);
}
`);
    const m = kd.utils.cppExtension.load({ name: 'square', sources: [src] });
    kd.library.registerAutograd('extjs::square', (ctx, g) => g.mul(ctx.savedTensors[0]).mul(2),
      { setupContext: (ctx, [x]) => ctx.saveForBackward(x) });
    const x = kd.tensor([0.5, -1.5, 2], { dtype: 'float64' }).requiresGrad_();
    assert.deepEqual(Array.from(m.ops.square(x).dataSync()), [0.25, 2.25, 4]);
    assert.ok(kd.autograd.gradcheck((t) => kd.ops.extjs.square(t), [x]));
    assert.ok(kd.autograd.gradgradcheck((t) => kd.ops.extjs.square(t), [x])); // the JS backward is made of kd ops
  });

  it('set_backward checks the backward op against the forward', function () {
    const src = writeSource('mismatch', `#include <kindling.h>
int kindling_extension_init(const kindling_api *kd) {
  int f, b;
  if (kd->define("extmis::f(Tensor x, float a) -> Tensor", &f) || kd->define("extmis::f_bw(Tensor g) -> Tensor", &b)) return -1;
  return kd->set_backward(f, b);
}
`);
    assert.throws(() => kd.utils.cppExtension.load({ name: 'mismatch', sources: [src] }),
      (e) => e.code === 'KD_INVALID_ARGUMENT' && /must take 1 gradient\(s\) then the op's 2 arguments and return 1 tensor/.test(e.message));
  });

  it("a kernel's error reaches JS with its code and message", function () {
    assert.throws(() => kd.ops.extdemo.scaled_tanh(kd.ones([2], { dtype: 'int32' })),
      (e) => e.code === 'KD_DTYPE_MISMATCH' && e.message === 'extdemo::scaled_tanh: expected a float32 or float64 tensor');
    assert.throws(() => kd.ops.extdemo.scaled_tanh(kd.ones([2, 2]).t()), code('KD_INVALID_ARGUMENT'));
  });

  it('compile errors, a missing entry point, a failing init and .cu sources are clear errors', function () {
    const broken = writeSource('broken', '#include <kindling.h>\nint kindling_extension_init(const kindling_api *api) { return oops; }\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'broken', sources: [broken] }),
      (e) => e.code === 'KD_BUILD_FAILED' && /oops/.test(e.message));
    const noInit = writeSource('noinit', 'int something(void) { return 0; }\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'noinit', sources: [noInit] }),
      (e) => e.code === 'KD_INVALID_ARGUMENT' && /defines no kindling_extension_init/.test(e.message));
    const badSchema = writeSource('badschema', '#include <kindling.h>\nint kindling_extension_init(const kindling_api *api) {\n' +
      '  int op; return api->define("extbad::f(Tensor x -> Tensor", &op);\n}\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'badschema', sources: [badSchema] }), code('KD_INVALID_SCHEMA'));
    assert.throws(() => kd.utils.cppExtension.load({ name: 'gpu', sources: ['kernel.cu'] }), code('KD_NOT_SUPPORTED'));
    assert.throws(() => kd.utils.cppExtension.load({ name: 'bad name', sources: [broken] }), code('KD_INVALID_TYPE'));
  });

  it('calls and backward leave nothing allocated', function () {
    const x = kd.randn([32, 32], { dtype: 'float64' }).requiresGrad_();
    const ints = kd.ones([2], { dtype: 'int32' });
    kd.tidy(() => kd.ops.extdemo.scaled_tanh(x, 2).sum().backward());
    const before = collectGarbage();
    for (let i = 0; i < 5; i++) {
      kd.tidy(() => kd.ops.extdemo.scaled_tanh(x, 2).sum().backward());
      kd.ops.extdemo.scaled_tanh(x, 2).dispose();
      assert.throws(() => kd.ops.extdemo.scaled_tanh(ints));
    }
    const after = kd.memory();
    assert.equal(after.liveTensors, before.liveTensors);
    assert.equal(after.hostBytesInUse, before.hostBytesInUse);
  });
});
