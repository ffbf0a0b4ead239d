// cpu_capability.test.js - runtime CPU dispatch (Note [CPU capability dispatch] in
// src/cpu/cpu_capability.h): the level in use is the best this CPU supports or the one forced
// with KINDLING_CPU_CAPABILITY; every level this CPU runs passes the PyTorch fixtures of the
// dispatched kernel families and gives the same results on large inputs; the addon outside the
// per-level copies is compiled for plain x86-64 (no -march=native).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, cpuFlags } = require('./helpers');

const root = path.resolve(__dirname, '..');
const LEVELS = ['default', 'avx2', 'avx512'];
const isX64Linux = process.arch === 'x64' && process.platform === 'linux';

/** The best level from /proc/cpuinfo's flags (the kernel's view of cpuid and xgetbv). */
function bestLevelFromCpuinfo() {
  const flags = cpuFlags();
  const has = (...f) => f.every((x) => flags.has(x));
  if (!has('avx2', 'fma', 'f16c', 'bmi1', 'bmi2', 'abm')) return 'default';
  return has('avx512f', 'avx512bw', 'avx512vl', 'avx512dq') ? 'avx512' : 'avx2';
}
const best = bestLevelFromCpuinfo();
const supported = LEVELS.slice(0, LEVELS.indexOf(best) + 1);

function runNode(args, capability, timeout = 240000) {
  const env = { ...process.env };
  if (capability === undefined) delete env.KINDLING_CPU_CAPABILITY;
  else env.KINDLING_CPU_CAPABILITY = capability;
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout, maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `child exited with ${r.status} ${r.signal || ''}: ${r.stderr}`);
  return r;
}
const levelOf = (capability) =>
  runNode(['-e', "process.stdout.write(require('./lib').build.cpuCapability)"], capability);

describe('CPU capability dispatch', function () {
  it('uses the best level this CPU supports, and reports it in kd.build', function () {
    const r = levelOf(undefined);
    assert.equal(r.stdout, best);
    assert.equal(r.stderr, '');
    if (!process.env.KINDLING_CPU_CAPABILITY) assert.equal(kd.build.cpuCapability, best);
  });

  for (const level of supported) {
    it(`KINDLING_CPU_CAPABILITY=${level} runs at ${level}`, function () {
      const r = levelOf(level);
      assert.equal(r.stdout, level);
      assert.equal(r.stderr, '');
    });
  }

  it('an unknown KINDLING_CPU_CAPABILITY is ignored with a warning (as PyTorch does)', function () {
    const r = levelOf('avx9000');
    assert.equal(r.stdout, best);
    assert.match(r.stderr, /KD_CPU_CAPABILITY.*ignoring invalid value for KINDLING_CPU_CAPABILITY: 'avx9000'/);
  });

  (best === 'avx512' ? it.skip : it)('a level this CPU cannot run is refused with a warning', function () {
    const r = levelOf('avx512');
    assert.equal(r.stdout, best);
    assert.match(r.stderr, /KINDLING_CPU_CAPABILITY=avx512 is not supported by this CPU; using/);
  });

  describe('every level this CPU supports gives the same results', function () {
    this.timeout(900000);
    const results = {};
    before(function () {
      for (const level of supported) {
        const r = runNode([path.join(__dirname, 'cpu_capability_child.js')], level, 600000);
        results[level] = JSON.parse(r.stdout.trim().split('\n').pop());
      }
    });

    for (const level of supported) {
      it(`${level}: the PyTorch fixtures of the dispatched families pass`, function () {
        const res = results[level];
        assert.equal(res.level, level);
        assert.ok(res.cases > 1000, `only ${res.cases} fixture cases ran`);
        assert.deepEqual(res.failures, []);
      });
    }

    // Levels differ only where the compiler vectorizes differently or contracts a * b + c into one
    // FMA (avx2 and avx512): a few ulps of the compute type. Integers and indices are exact.
    const tol = { float32: [1e-5, 1e-6], float64: [1e-12, 1e-14], float16: [2e-3, 1e-4], bfloat16: [1.6e-2, 1e-3] };
    for (const level of supported.slice(1)) {
      it(`${level}: large-input results equal the default level's`, function () {
        const a = results.default.probe, b = results[level].probe;
        assert.deepEqual(Object.keys(b), Object.keys(a));
        for (const k of Object.keys(a)) {
          assert.equal(b[k].dtype, a[k].dtype, k);
          assert.equal(b[k].values.length, a[k].values.length, k);
          const t = tol[a[k].dtype];
          for (let i = 0; i < a[k].values.length; i++) {
            const u = a[k].values[i], v = b[k].values[i];
            if (Object.is(u, v)) continue;
            if (!t) assert.fail(`${k}[${i}]: ${v} at ${level}, ${u} at default`);
            assert.ok(Math.abs(u - v) <= t[1] + t[0] * Math.abs(u), `${k}[${i}]: ${v} at ${level}, ${u} at default`);
          }
        }
      });
    }
  });

  describe('the build targets plain x86-64', function () {
    const mk = path.join(root, 'build', 'kindling.target.mk');
    const obj = path.join(root, 'build', 'Release', 'obj.target');

    it('no target of binding.gyp compiles with -march', function () {
      const gyp = fs.readFileSync(path.join(root, 'binding.gyp'), 'utf8');
      assert.doesNotMatch(gyp.replace(/#.*$/gm, ''), /-march/);
      if (fs.existsSync(mk)) assert.doesNotMatch(fs.readFileSync(mk, 'utf8'), /-march/);
    });

    // With objdump and the object files of a checkout build: AVX registers only in the avx2 and
    // avx512 copies of the dispatched files.
    const objdump = spawnSync('objdump', ['--version']).status === 0;
    const objects = (dir) => fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.o')).map((f) => path.join(dir, f)) : [];
    const usesAvx = (file) => /%[yz]mm\d/.test(spawnSync('objdump', ['-d', file], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout);
    (isX64Linux && objdump && fs.existsSync(obj) ? it : it.skip)('baseline objects use no AVX registers; the avx2 and avx512 copies do', function () {
      this.timeout(120000);
      // the objects of this build's sources (a directory may also hold objects of files no longer built there)
      const built = (target, list) => list.map((f) => path.join(obj, target, f.replace(/\.c$/, '.o'))).filter((f) => fs.existsSync(f));
      const sources = (dispatched) => spawnSync(process.execPath, [path.join(root, 'tools', 'list-sources.js'), ...(dispatched ? ['dispatched'] : [])],
        { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
      const baseline = [...built('kindling', sources(false).filter((f) => /^src\/(core|cpu)\//.test(f))), ...built('kindling_cpu_default', sources(true))];
      assert.ok(baseline.length > 20, `only ${baseline.length} baseline objects found`);
      for (const f of baseline) assert.ok(!usesAvx(f), `${path.relative(root, f)} uses AVX registers`);
      for (const level of ['avx2', 'avx512']) {
        const f = path.join(obj, `kindling_cpu_${level}`, 'src', 'cpu', 'binary.o');
        assert.ok(usesAvx(f), `${level} binary.o uses no AVX registers`);
      }
      // the avx512 copies use AVX-512 (zmm registers, mask registers or the upper 16 vector
      // registers, which only EVEX encodings reach); the avx2 copies never do
      const avx512Insns = (level) => objects(path.join(obj, `kindling_cpu_${level}`, 'src', 'cpu'))
        .map((f) => spawnSync('objdump', ['-d', f], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout)
        .join('').match(/%zmm\d+|%k[1-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b/g) || [];
      assert.ok(avx512Insns('avx512').length > 1000, `the avx512 copies use AVX-512 registers ${avx512Insns('avx512').length} times`);
      assert.deepEqual(avx512Insns('avx2'), []);
    });
  });
});
