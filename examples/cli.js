// cli.js - command-line handling for the example scripts. Options come from one table
// ({name: {type, default, short, help}}) that gives both node:util parseArgs its options and
// the usage text. runCli(script, options, main) then:
//   --help           prints the usage text, exit status 0
//   a bad option     prints one line (what is wrong, and "see --help"), exit status 2
//   main() fails     prints one line for errors a user can act on (UsageError, errors with a
//                    string `code`: kindling's, Node's system errors), exit status 1; any other
//                    error is a bug in the example and keeps its stack trace.
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');

/** A mistake in the command line or its values: reported in one line, exit status 2. */
class UsageError extends Error {
  get name() { return 'UsageError'; }
}

/** The usage text of `script` (a path) for an options table. */
function usage(script, options, summary = '') {
  const lines = Object.entries(options).map(([k, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${k}${o.type === 'string' ? ' <value>' : ''}`;
    const def = o.type === 'string' && o.default !== undefined && o.default !== '' ? ` (default: ${o.default})` : '';
    return `  ${flag.padEnd(26)} ${o.help || ''}${def}`;
  });
  const rel = path.relative(process.cwd(), script);
  return `usage: node ${rel.startsWith('..') ? script : rel} [options]\n${summary ? `${summary}\n` : ''}${lines.join('\n')}`;
}

/** The option values of argv; a UsageError for unknown options, missing values or positionals. */
function parseCli(options, argv = process.argv.slice(2)) {
  const spec = Object.fromEntries(Object.entries(options).map(([k, o]) => [k,
    { type: o.type, ...(o.default !== undefined ? { default: o.default } : {}), ...(o.short ? { short: o.short } : {}) }]));
  try {
    return parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false }).values;
  } catch (e) {
    if (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * Runs `await main(values)` for a script whose options table has a boolean `help`; reports as the
 * file header says. Returns the Promise of the run.
 */
function runCli(script, options, main, summary = '') {
  const name = path.basename(script);
  const fail = (e) => {
    if (e instanceof UsageError) {
      console.error(`${name}: ${e.message} (see --help)`);
      process.exitCode = 2;
    } else if (e && typeof e.code === 'string') {
      console.error(`${name}: ${e.message}`);
      process.exitCode = 1;
    } else {
      console.error(e && e.stack ? e.stack : String(e));
      process.exitCode = 1;
    }
  };
  let values;
  try {
    values = parseCli(options);
  } catch (e) {
    fail(e);
    return Promise.resolve();
  }
  if (values.help) {
    console.log(usage(script, options, summary));
    return Promise.resolve();
  }
  return Promise.resolve().then(() => main(values)).catch(fail);
}

module.exports = { UsageError, usage, parseCli, runCli };
