#!/usr/bin/env node
// test-large.js - `npm run test:large`: the tests the unit suite skips because they need a lot
// of memory (tensors of about 4 GiB, loaded from sparse files): mocha with KINDLING_TEST_LARGE=1
// over the tests named for it. Arguments go to mocha.
//   npm run test:large
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const mocha = path.join(path.dirname(require.resolve('mocha/package.json', { paths: [root] })), 'bin', 'mocha.js');
const r = spawnSync(process.execPath, [mocha, '--grep', 'KINDLING_TEST_LARGE', 'test/serialization.test.js', ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit', env: { ...process.env, KINDLING_TEST_LARGE: '1' } });
process.exitCode = r.error || r.status !== 0 ? 1 : 0;
