// results.js - `--update-results`: writes this run into bench/RESULTS.md, one section per
// machine (CPU model, CPU count, device, and the GPU on --device cuda), replacing that
// machine's previous section and keeping the others and the hand-written text around them.
// A section lies between `<!-- bench:machine KEY -->` and `<!-- /bench:machine -->`.
'use strict';
const fs = require('node:fs');

const file = require('node:path').join(__dirname, '..', 'RESULTS.md');

function machineKey(machine, device, gpu) {
  return `${machine.cpu} x${machine.logicalCpus} ${device}${gpu ? ` ${gpu}` : ''}`.replace(/\s+/g, ' ').replace(/--/g, '-');
}

/** Replaces (or appends) the section of `key` in RESULTS.md; returns the file's path. */
function updateResults(key, body) {
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n';
  const open = `<!-- bench:machine ${key} -->`;
  const close = '<!-- /bench:machine -->';
  const section = `${open}\n${body.trim()}\n${close}`;
  const at = text.indexOf(open);
  if (at >= 0) {
    const end = text.indexOf(close, at);
    text = text.slice(0, at) + section + (end >= 0 ? text.slice(end + close.length) : '\n');
  } else {
    const marker = '<!-- bench:sections -->';
    const m = text.indexOf(marker);
    text = m >= 0 ? `${text.slice(0, m + marker.length)}\n\n${section}${text.slice(m + marker.length)}`
      : `${text.trimEnd()}\n\n${section}\n`;
  }
  fs.writeFileSync(file, text);
  return file;
}

module.exports = { machineKey, updateResults };
