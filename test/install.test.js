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

  describe('a missing or unloadable native addon', function () {
    // A copy of lib/ and package.json without a build (or with a broken one), loaded in a child.
    function loadCopy(addonBytes) {
      const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-'));
      fs.cpSync(path.join(ROOT, 'lib'), path.join(pkg, 'lib'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
      if (addonBytes !== null) {
        fs.mkdirSync(path.join(pkg, 'build', 'Release'), { recursive: true });
        fs.writeFileSync(path.join(pkg, 'build', 'Release', 'kindling.node'), addonBytes);
      }
      const r = spawnSync(process.execPath, ['-e', `
        try { require(${JSON.stringify(pkg)}); console.log('{"loaded": true}'); }
        catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`],
      { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 0, r.stderr);
      return { pkg, err: JSON.parse(r.stdout) };
    }

    it('not built: a KindlingError saying to run npm rebuild kindling', function () {
      const { pkg, err } = loadCopy(null);
      assert.equal(err.name, 'KindlingError');
      assert.equal(err.code, 'KD_NOT_BUILT');
      assert.match(err.message, /native addon is not built/);
      assert.ok(err.message.includes(path.join(pkg, 'build', 'Release', 'kindling.node')), err.message);
      assert.match(err.message, /run `npm rebuild kindling`/);
    });

    it('not loadable (a broken file): the same advice, with the loader\'s reason', function () {
      const { err } = loadCopy('not a shared object');
      assert.equal(err.code, 'KD_NOT_BUILT');
      assert.match(err.message, /native addon could not be loaded \(.*kindling\.node/);
      assert.match(err.message, /run `npm rebuild kindling`/);
    });
  });
});
