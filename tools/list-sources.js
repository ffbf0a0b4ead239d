#!/usr/bin/env node
// Used by binding.gyp: prints every C source under src/ (one per line), so adding a file
// to the core never means editing the build.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const root = path.resolve(__dirname, '..');
function walk(dir, out) {
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) walk(rel, out);
    else if (e.name.endsWith('.c')) out.push(rel);
  }
  return out;
}
process.stdout.write(walk('src', []).join('\n'));
