// install.test.js - what a new user meets before the first tensor: `npm test` runs every check,
// and a missing or unloadable native addon is a clear error saying how to rebuild it.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');

const ROOT = path.join(__dirname, '..');

describe('installation', function () {
  this.timeout(60000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-install-')); });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('npm test runs the type check also when a unit test fails, and fails', function () {
    const failing = path.join(tmp, 'failing.test.js');
    fs.writeFileSync(failing, "it('fails on purpose', () => { throw new Error('failing on purpose'); });\n");
    // --no-config: only this file, not the suite of .mocharc.json
    const r = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'test.js'), '--no-config', failing],
      { cwd: ROOT, encoding: 'utf8', timeout: 60000 });
    assert.notEqual(r.status, 0, `tools/test.js exited 0 with a failing test:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /npm test: mocha failed \(exit status \d+\); tsc -p test\/types passed/);
  });
});
