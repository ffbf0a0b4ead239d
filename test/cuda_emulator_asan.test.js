// cuda_emulator_asan.test.js - the CUDA kernels on the emulated GPU built with AddressSanitizer
// and UBSan (build/Release/libkindling_cuda_emu_asan.so, from `node tools/build-emulator.js
// --sanitize` or `npm run test:emulator:asan`), in a child process: the pointwise kernel in each
// of its launch modes (contiguous with vector I/O, contiguous unaligned, strided) with one, two
// and three inputs and with host scalars must read only the operands it has, and give the CPU's
// values. Absent inputs (past nops) are NULL in the iterator: a read of one is a null-pointer
// access that a GPU's compiler happens to drop as dead code, and UBSan reports. Runs when the
// sanitized library is built; `npm run test:emulator:asan` runs the whole emulated suite so.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const lib = path.join(ROOT, 'build', 'Release', 'libkindling_cuda_emu_asan.so');

function asanRuntime() {
  try {
    const file = execFileSync(process.env.CC || 'gcc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
    return path.isAbsolute(file) && fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

describe('the emulated GPU under AddressSanitizer and UBSan', function () {
  this.timeout(120000);
  const runtime = fs.existsSync(lib) ? asanRuntime() : null;
  if (!runtime) {
    it('is not built here (node tools/build-emulator.js --sanitize)', function () {
      console.log('      (skipped: build/Release/libkindling_cuda_emu_asan.so or the ASan runtime is missing)');
      this.skip();
    });
    return;
  }

  it('pointwise kernels read only their operands, in every launch mode', function () {
    // Each op runs on the CPU and on the device; the child prints the largest relative difference
    // (float32: a few ulps, the device's exp is not the CPU's).
    const script = `const kd = require('.');
      kd.manualSeed(3);
      const base = kd.randn([37, 41]);                    // 1517 elements: a vector tail too
      const inputs = {
        aligned: (t) => t,                                 // contiguous, vector I/O
        unaligned: (t) => t.flatten().narrow(0, 1, 1500),  // contiguous, storage offset 1
        strided: (t) => t.t(),                             // strided
      };
      const ops = {
        neg: (a) => a.neg(),                               // one input
        exp: (a) => a.exp(),
        add: (a, b) => a.add(b),                           // two inputs
        mulScalar: (a) => a.mul(2.5),                      // an input and a host scalar
        gt: (a, b) => a.gt(b),                             // bool output
        lnot: (a) => a.gt(0).logicalNot(),
        where: (a, b) => kd.where(a.gt(0), a, b),          // three inputs
        addcmul: (a, b) => a.addcmul(b, a, { value: 0.5 }),
      };
      let worst = 0;
      for (const make of Object.values(inputs)) {
        const a = make(base), b = make(base.mul(-0.5).add(0.25));
        const da = make(base.to('cuda')), db = make(base.to('cuda').mul(-0.5).add(0.25));
        for (const [name, f] of Object.entries(ops)) {
          const want = f(a, b).to('float64'), got = f(da, db).cpu().to('float64');
          worst = Math.max(worst, want.sub(got).abs().div(want.abs().add(1)).max().item()); // relative
        }
      }
      console.log(JSON.stringify({ worst }));`;
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 110000,
      env: {
        ...process.env,
        KINDLING_CUDA: 'emulate',
        KINDLING_CUDA_LIBRARY: lib,
        LD_PRELOAD: runtime,
        ASAN_OPTIONS: 'detect_leaks=0',
        UBSAN_OPTIONS: 'print_stacktrace=1',
      },
    });
    assert.doesNotMatch(r.stderr, /runtime error|AddressSanitizer/, r.stderr);
    assert.equal(r.status, 0, r.stderr);
    const { worst } = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.ok(worst <= 1e-6, `largest relative difference from the CPU: ${worst}`);
  });
});
