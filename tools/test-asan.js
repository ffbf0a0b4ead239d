#!/usr/bin/env node
// test-asan.js - `npm run test:asan`: the whole mocha suite (.mocharc.js) on the addon built
// with AddressSanitizer + UndefinedBehaviorSanitizer (build/asan/Release/kindling.node, next to
// the normal build; see tools/sanitizers.js), so out-of-bounds accesses, uses after free and
// undefined behaviour (signed overflow, misaligned loads, bad shifts) anywhere a test reaches are
// reported, as the short seeded fuzz runs of the suite reach them too. Child processes the tests
// start (memory, examples, fuzz pools) load the instrumented addon as well. kindling's own leak
// checks (test/memory.test.js: liveTensors, hostBytesInUse after failing ops) run as in npm test.
// The exit status is non-zero when a test failed or any sanitizer report was found.
//   node tools/test-asan.js                  build (incrementally) and run everything
//   node tools/test-asan.js --no-build       run only
//   node tools/test-asan.js test/x.test.js   these test files only
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { bin } = require('./addon-variant');
const { ASAN_ADDON, buildAsanAddon, asanNodeEnv, step, summarize } = require('./sanitizers');

const argv = process.argv.slice(2);
const noBuild = argv.includes('--no-build');
const files = argv.filter((a) => !a.startsWith('--'));

async function main() {
  const t0 = Date.now();
  const addon = noBuild ? ASAN_ADDON : buildAsanAddon();
  const built = Date.now();
  if (!fs.existsSync(addon)) throw new Error('build/asan/Release/kindling.node is not built (run without --no-build)');
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-asan-'));
  // The instrumented addon runs some 2-5x slower: a longer timeout. --exit as in
  // tools/test-emulator-asan.js: this run is about the sanitizers.
  const mocha = [bin('mocha', 'mocha.js'), '--exit', '--timeout', '180000', ...(files.length ? ['--no-config', ...files] : [])];
  const result = await step(`mocha under ASan+UBSan (${files.length ? files.join(' ') : '.mocharc.js'})`,
    process.execPath, mocha, asanNodeEnv(logDir, addon));
  summarize('ASan+UBSan run of the mocha suite', logDir, [result], t0, built);
}

main().catch((e) => {
  console.error(`kindling: ${e.message}`);
  process.exitCode = 1;
});
