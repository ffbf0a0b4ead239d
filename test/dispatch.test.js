// dispatch.test.js - KINDLING_DISPATCH_TRACE=1 shows each call's path through the dispatch
// keys: a.add(b) on CPU tensors falls through Autograd to the CPU kernel.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

function runChild(env, code) {
  const script = `const kd = require(${JSON.stringify(ROOT)}); ${code}`;
  return spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env },
  });
}

describe('dispatch trace', function () {
  it('a.add(b): the Autograd kernel runs first and hands over to the CPU kernel', function () {
    const r = runChild({ KINDLING_DISPATCH_TRACE: '1' },
      `const a = kd.ones([2]); const b = kd.ones([2]); process.stderr.write('--mark--\\n');
       const c = a.add(b); process.stderr.write('--end--\\n'); console.log(Array.from(c.dataSync()).join(','));`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '2,2');
    const section = r.stderr.split('--mark--')[1].split('--end--')[0];
    const lines = section.split('\n').filter((l) => /\badd\b/.test(l));
    const ag = lines.findIndex((l) => /Autograd/.test(l));
    const cpu = lines.findIndex((l) => /CPU/.test(l) && !/fallthrough/i.test(l));
    assert.ok(ag >= 0, `no Autograd line for add in:\n${section}`);
    assert.ok(cpu > ag, `no CPU line after the Autograd one in:\n${section}`);
    assert.ok(!lines.some((l) => /CUDA/.test(l)), 'a CPU add never visits the CUDA key');
  });

  it('other ops are traced too (mm, sum)', function () {
    const r = runChild({ KINDLING_DISPATCH_TRACE: '1' },
      `const a = kd.ones([2, 2]); process.stderr.write('--mark--\\n'); a.mm(a).sum();`);
    assert.equal(r.status, 0, r.stderr);
    const section = r.stderr.split('--mark--')[1];
    assert.match(section, /\bmm\b.*CPU/);
    assert.match(section, /\bsum\b.*CPU/);
  });

  it('no trace without the variable (or with 0)', function () {
    for (const v of [undefined, '0']) {
      const childEnv = { ...process.env };
      delete childEnv.KINDLING_DISPATCH_TRACE;
      if (v !== undefined) childEnv.KINDLING_DISPATCH_TRACE = v;
      const r = spawnSync(process.execPath, ['-e', `const kd = require(${JSON.stringify(ROOT)}); kd.ones([2]).add(kd.ones([2]));`],
        { encoding: 'utf8', timeout: 60000, env: childEnv });
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /dispatch/, `trace printed with KINDLING_DISPATCH_TRACE=${v}`);
    }
  });
});
