// generated.test.js - the files generated from src/ops/oplist/ are fresh, and every op of
// the list is installed on kd / Tensor.prototype as its variants say.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

describe('generated files', function () {
  it('node tools/gen-ops.js --check exits 0', function () {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'gen-ops.js'), '--check'], { cwd: ROOT, encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, `gen-ops --check failed (stale generated files?):\n${r.stdout}\n${r.stderr}`);
  });

  it('every op in the op list is installed as its variants say', function () {
    const ops = require(path.join(ROOT, 'src', 'ops', 'oplist'));
    const missing = [];
    for (const op of ops) {
      const name = op.jsname || op.name.split('.')[0]; // `jsname`: kd.linalg.inv is op 'linalgInv'
      const v = op.variants || [];
      for (const ns of v.includes('function') ? op.ns || [''] : []) {
        const obj = ns ? ns.split('.').reduce((o, k) => (o ? o[k] : undefined), kd) : kd;
        if (!obj || typeof obj[name] !== 'function') missing.push(`kd.${ns ? ns + '.' : ''}${name}`);
      }
      if (v.includes('method') && typeof kd.Tensor.prototype[name] !== 'function') missing.push(`Tensor#${name}`);
      if (v.includes('inplace') && typeof kd.Tensor.prototype[`${name}_`] !== 'function') missing.push(`Tensor#${name}_`);
    }
    assert.deepEqual(missing, []);
  });
});

describe('module entry points', function () {
  it('ESM import gives the same API', function () {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import * as kd from ${JSON.stringify(path.join(ROOT, 'lib', 'index.mjs'))};
      import def from ${JSON.stringify(path.join(ROOT, 'lib', 'index.mjs'))};
      const t = kd.ones([2]).add(1);
      console.log(JSON.stringify([Array.from(t.dataSync()), typeof kd.tidy, typeof kd.Tensor, typeof def.zeros]));`],
    { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [[2, 2], 'function', 'function', 'function']);
  });

  it('node tools/gen-esm.js --check exits 0 (lib/index.mjs is generated from the CommonJS exports)', function () {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'gen-esm.js'), '--check'], { cwd: ROOT, encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, `gen-esm --check failed (stale lib/index.mjs?):\n${r.stdout}\n${r.stderr}`);
  });

  it('the ESM namespace has the names and values of the CommonJS exports', function () {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import * as ns from ${JSON.stringify(path.join(ROOT, 'lib', 'index.mjs'))};
      import { createRequire } from 'node:module';
      const kd = createRequire(import.meta.url)(${JSON.stringify(ROOT)});
      const esm = Object.keys(ns).filter((k) => k !== 'default').sort();
      const cjs = Object.keys(kd).sort();
      console.log(JSON.stringify({ esm, cjs, differ: cjs.filter((k) => k in ns && ns[k] !== kd[k]), def: ns.default === kd }));`],
    { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stderr);
    const { esm, cjs, differ, def } = JSON.parse(r.stdout);
    assert.deepEqual({ onlyInEsm: esm.filter((k) => !cjs.includes(k)), onlyInCommonJs: cjs.filter((k) => !esm.includes(k)) },
      { onlyInEsm: [], onlyInCommonJs: [] });
    assert.deepEqual(differ, []);
    assert.equal(def, true);
    for (const name of ['noGrad', 'autograd', 'inferenceMode', 'enableGrad', 'setGradEnabled', 'isGradEnabled', 'isInferenceModeEnabled', 'backends', 'var']) {
      assert.ok(esm.includes(name), `ESM lacks ${name}`);
    }
  });

  it('package.json exports resolve', function () {
    const pkg = require(path.join(ROOT, 'package.json'));
    assert.equal(require.resolve(ROOT), path.join(ROOT, pkg.main));
    assert.equal(typeof kd.version, 'string');
  });
});
