// extension.test.js - C extensions (include/kindling.h) through kd.utils.cppExtension.load: the
// example extension (examples/extension/scaled_tanh.c, a fused op whose backward is a fused C op)
// compiled into a fresh cache dir, its values against Math.tanh, gradcheck, a C op with a JS
// backward (gradgradcheck), the cache (same process, another process), errors (a kernel's error
// code, compile errors, no entry point, a failing init, a mismatched backward op), that calls leave
// no tensor behind, and the example's CUDA sources compiled by nvcc for kindling's GPU architectures
// (compile only: no GPU needed; skipped without nvcc). test/extension_cuda.test.js runs them.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { kd, assert } = require('./helpers');
const { useFreshExtensionCache, assertScaledTanhLeavesNothing } = require('./extension_helpers');

let cache; // { dir }: the describe's cache dir
const code = (c) => (e) => { assert.equal(e.code, c, e.message); return true; };

function writeSource(name, text) {
  const file = path.join(cache.dir, `${name}.c`);
  fs.writeFileSync(file, text);
  return file;
}

describe('kd.utils.cppExtension', function () {
  this.timeout(120000);
  cache = useFreshExtensionCache('kd-ext-');
  let ext;
  before(function () {
    ext = require('../examples/extension/run.js').loadScaledTanh();
  });

  it('compiles the example into the cache dir and registers its ops', function () {
    assert.equal(ext.built, true);
    assert.equal(path.dirname(ext.path), cache.dir);
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
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, KINDLING_EXTENSIONS_DIR: cache.dir, CC: 'false' }, encoding: 'utf8' });
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

  it('arg_int of a float: truncated, saturated at the int64 range, NaN 0 (never the undefined cast)', function () {
    const src = writeSource('intof', `#include <kindling.h>
static const kindling_api *kd;
static int intof(kd_op_call *c) {
  int64_t one = 1;
  kd_tensor *y = kd->new_output(c, 0, &one, 1, KD_INT64);
  if (!y) return kd->last_status();
  *(int64_t *)kd->data(y) = kd->arg_int(c, 1);
  return KD_SUCCESS;
}
int kindling_extension_init(const kindling_api *api) {
  int op; kd = api;
  return kd->define("extint::intof(Tensor x, Scalar s) -> Tensor", &op) || kd->impl(op, KD_DEVICE_TYPE_CPU, intof);
}
`);
    const m = kd.utils.cppExtension.load({ name: 'intof', sources: [src] });
    const x = kd.ones([1]);
    const got = (s) => m.ops.intof(x, s).dataSync()[0];
    assert.equal(got(-2.75), -2n);
    assert.equal(got(2n ** 62n), 2n ** 62n);
    assert.equal(got(1e300), 2n ** 63n - 1n);
    assert.equal(got(-Infinity), -(2n ** 63n));
    assert.equal(got(NaN), 0n);
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

  it('compile errors, a missing entry point and a failing init are clear errors', function () {
    const broken = writeSource('broken', '#include <kindling.h>\nint kindling_extension_init(const kindling_api *api) { return oops; }\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'broken', sources: [broken] }),
      (e) => e.code === 'KD_BUILD_FAILED' && /oops/.test(e.message));
    const noInit = writeSource('noinit', 'int something(void) { return 0; }\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'noinit', sources: [noInit] }),
      (e) => e.code === 'KD_INVALID_ARGUMENT' && /defines no kindling_extension_init/.test(e.message));
    const badSchema = writeSource('badschema', '#include <kindling.h>\nint kindling_extension_init(const kindling_api *api) {\n' +
      '  int op; return api->define("extbad::f(Tensor x -> Tensor", &op);\n}\n');
    assert.throws(() => kd.utils.cppExtension.load({ name: 'badschema', sources: [badSchema] }), code('KD_INVALID_SCHEMA'));
    assert.throws(() => kd.utils.cppExtension.load({ name: 'bad name', sources: [broken] }), code('KD_INVALID_TYPE'));
  });

  describe('cache dirs and sources that cannot be used', function () {
    const buildFailed = (re) => (e) => e.code === 'KD_BUILD_FAILED' && re.test(e.message);
    const withCacheDir = (dir, fn) => {
      const saved = process.env.KINDLING_EXTENSIONS_DIR;
      process.env.KINDLING_EXTENSIONS_DIR = dir;
      try {
        return fn();
      } finally {
        process.env.KINDLING_EXTENSIONS_DIR = saved;
      }
    };
    const tinySource = (name, ns) => writeSource(name, `#include <kindling.h>
static int one(kd_op_call *c) { (void)c; return KD_SUCCESS; }
int kindling_extension_init(const kindling_api *kd) {
  int op;
  return kd->define("${ns}::f(Tensor x) -> ()", &op) || kd->impl(op, KD_DEVICE_TYPE_CPU, one);
}
`);

    it('a cache dir that cannot be made or is a file is KD_BUILD_FAILED naming it', function () {
      const src = tinySource('baddir', 'extbaddir');
      const file = writeSource('not-a-dir', '');
      const load = () => kd.utils.cppExtension.load({ name: 'baddir', sources: [src] });
      withCacheDir(path.join(file, 'x'), () => assert.throws(load, buildFailed(/cannot create the extension cache dir '.*not-a-dir\.c\/x' \(\$KINDLING_EXTENSIONS_DIR\): ENOTDIR/)));
      withCacheDir(file, () => assert.throws(load, buildFailed(/not-a-dir\.c' \(\$KINDLING_EXTENSIONS_DIR\): ENOTDIR: not a directory/)));
    });

    it('a cache dir under /proc is KD_BUILD_FAILED at once (mkdir -p there never returned)', function () {
      if (!fs.existsSync('/proc/self')) this.skip();
      const script = `process.env.KINDLING_EXTENSIONS_DIR = '/proc/kindling-no-such-dir/x';
        try { require(${JSON.stringify(path.join(__dirname, '..'))}).utils.cppExtension.load({ name: 'p', sources: [${JSON.stringify(tinySource('procdir', 'extproc'))}] }); }
        catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.signal, null, 'the load did not return');
      const { code: c, message } = JSON.parse(r.stdout.trim());
      assert.equal(c, 'KD_BUILD_FAILED');
      assert.match(message, /cannot create the extension cache dir '\/proc\/kindling-no-such-dir\/x'.*ENOENT/);
    });

    it('a missing source is KD_BUILD_FAILED naming it', function () {
      const missing = path.join(cache.dir, 'no-such-source.c');
      assert.throws(() => kd.utils.cppExtension.load({ name: 'missing', sources: [missing] }),
        buildFailed(/cannot read the source '.*no-such-source\.c': ENOENT/));
      assert.throws(() => kd.utils.cppExtension.build({ name: 'missing', sources: [cache.dir] }), buildFailed(/EISDIR/));
    });

    it("a source whose path starts with '-' is compiled as a file, never read as an option", function () {
      tinySource('-dash', 'extdash');
      const cwd = process.cwd();
      process.chdir(cache.dir);
      try {
        const m = kd.utils.cppExtension.load({ name: 'dash', sources: ['-dash.c'] });
        assert.deepEqual(Object.keys(m.ops), ['f']);
      } finally {
        process.chdir(cwd);
      }
    });
  });

  it('calls and backward leave nothing allocated', function () {
    assertScaledTanhLeavesNothing('cpu');
  });

  it('the headers an extension compiles against ship in the package (its files)', function () {
    const root = path.join(__dirname, '..');
    const { files } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const emulatorHeaders = fs.readdirSync(path.join(root, 'cuda', 'emulator', 'include')).filter((f) => f.endsWith('.h'));
    for (const header of ['include/kindling.h', 'include/kindling_cuda.h', ...emulatorHeaders.map((f) => `cuda/emulator/include/${f}`)]) {
      assert.ok(fs.existsSync(path.join(root, header)), header);
      assert.ok(files.some((f) => (f.endsWith('/') ? header.startsWith(f) : header === f)), `${header} is not in package.json's files`);
    }
  });

  const nvccHome = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']
    .find((h) => h && fs.existsSync(path.join(h, 'bin', 'nvcc')));
  (nvccHome ? describe : describe.skip)(`.cu sources with nvcc${nvccHome ? '' : ' (skipped: no nvcc in $CUDA_HOME, $CUDA_PATH or /usr/local/cuda)'}`, function () {
    let savedCuda;
    let savedArchs;
    before(function () {
      // nvcc, not the emulated GPU's compiler, whatever backend this process runs on
      savedCuda = process.env.KINDLING_CUDA;
      savedArchs = process.env.KINDLING_CUDA_ARCHS;
      delete process.env.KINDLING_CUDA;
      delete process.env.KINDLING_CUDA_ARCHS;
    });
    after(function () {
      for (const [k, v] of [['KINDLING_CUDA', savedCuda], ['KINDLING_CUDA_ARCHS', savedArchs]]) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
    const { scaledTanhOptions } = require('../examples/extension/run.js');

    it("builds the example's kernels for kindling's architectures (a cubin per arch, PTX for the newest) into one object", function () {
      const { path: so, built } = kd.utils.cppExtension.build(scaledTanhOptions({ cuda: true }));
      assert.equal(built, true);
      assert.deepEqual(fatbinEntries(so), ['elf sm_80', 'elf sm_90', 'ptx sm_90']);
      const symbols = spawnSync('nm', ['-D', '--defined-only', so], { encoding: 'utf8' }).stdout;
      assert.match(symbols, / T kindling_extension_init\n/);
      assert.match(symbols, / T scaled_tanh_forward_cuda\n/);
      assert.equal(kd.utils.cppExtension.build(scaledTanhOptions({ cuda: true })).built, false, 'cached');
      process.env.KINDLING_CUDA_ARCHS = '86';
      const other = kd.utils.cppExtension.build(scaledTanhOptions({ cuda: true }));
      assert.notEqual(other.path, so);
      assert.deepEqual(fatbinEntries(other.path), ['elf sm_86', 'ptx sm_86']);
    });

    it("nvcc's errors are KD_BUILD_FAILED with its message", function () {
      const bad = path.join(cache.dir, 'bad.cu');
      fs.writeFileSync(bad, '#include <kindling_cuda.h>\n__global__ void k(float *p) { p[0] = undefined_name; }\n');
      assert.throws(() => kd.utils.cppExtension.build({ name: 'bad', sources: [bad] }),
        (e) => e.code === 'KD_BUILD_FAILED' && /undefined_name/.test(e.message));
    });
  });
});

/**
 * The GPU code in a shared object built by nvcc: its .nv_fatbin section's entries, each as
 * 'elf sm_XY' (a cubin) or 'ptx sm_XY', sorted, of the extension's own kernels (the entries of
 * kernels nvcc links in from the CUDA runtime are left out by keeping distinct entries only).
 */
function fatbinEntries(file) {
  const sections = spawnSync('readelf', ['-SW', file], { encoding: 'utf8' }).stdout;
  const line = sections.split('\n').find((l) => /\s\.nv_fatbin\s/.test(l));
  assert.ok(line, 'no .nv_fatbin section');
  const [, , offset, size] = line.split(']')[1].trim().split(/\s+/);
  const data = fs.readFileSync(file).subarray(parseInt(offset, 16), parseInt(offset, 16) + parseInt(size, 16));
  const entries = new Set();
  for (let p = 0; p + 16 <= data.length;) {
    if (data.readUInt32LE(p) !== 0xba55ed50) break; // a fatbin header: magic, version, header size, size
    const headerSize = data.readUInt16LE(p + 6);
    const end = p + headerSize + Number(data.readBigUInt64LE(p + 8));
    for (let q = p + headerSize; q < end;) { // an entry: kind (1 PTX, 2 ELF), header size, size, ..., arch at 28
      const kind = data.readUInt16LE(q);
      entries.add(`${kind === 1 ? 'ptx' : 'elf'} sm_${data.readUInt32LE(q + 28)}`);
      q += data.readUInt32LE(q + 4) + Number(data.readBigUInt64LE(q + 8));
    }
    p = end;
  }
  return [...entries].sort();
}
