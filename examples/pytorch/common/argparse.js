// argparse.js - the part of Python's argparse that pytorch/examples' programs use, so that their
// ports keep the originals' command lines as they are:
//
//   const parser = new ArgumentParser({ description: 'PyTorch MNIST Example' });
//   parser.addArgument('--batch-size', { type: 'int', default: 64, metavar: 'N', help: '...' });
//   parser.addArgument('--dry-run', { action: 'store_true', help: '...' });
//   const args = parser.parseArgs();          // process.argv.slice(2) unless given
//   args.batchSize, args.dryRun               // argparse's dest (batch_size), camelCased
//
// Types 'int', 'float' and 'str'; actions 'store' (default) and 'store_true'. `--name value` and
// `--name=value` are accepted; -h/--help prints the usage and exits with status 0; an unknown
// option or a bad value prints argparse's usage line and error and exits with status 2.
'use strict';

const path = require('node:path');

class ArgumentParser {
  constructor({ description = '', prog } = {}) {
    this.description = description;
    this.prog = prog || path.basename(process.argv[1] || 'main.js');
    this.actions = [{ flags: ['-h', '--help'], action: 'help', dest: 'help', help: 'show this help message and exit' }];
  }

  /** One option: flags ('--batch-size', or '-b', '--batch-size') then {type, default, action, metavar, help}. */
  addArgument(...spec) {
    const opts = typeof spec[spec.length - 1] === 'object' ? spec.pop() : {};
    const long = spec.find((f) => f.startsWith('--')) || spec[0];
    const dest = long.replace(/^-+/, '').replace(/[-_]([a-z0-9])/g, (_, c) => c.toUpperCase());
    const action = opts.action || 'store';
    if (!['store', 'store_true'].includes(action)) throw new TypeError(`addArgument: unsupported action ${action}`);
    const type = opts.type || 'str';
    if (!['int', 'float', 'str'].includes(type)) throw new TypeError(`addArgument: unsupported type ${type}`);
    const def = opts.default !== undefined ? opts.default : (action === 'store_true' ? false : null);
    this.actions.push({ flags: spec, action, type, default: def, dest, metavar: opts.metavar, help: opts.help || '' });
    return this;
  }

  formatUsage() {
    const parts = this.actions.map((a) => (a.action === 'store' ? `[${a.flags[0]} ${a.metavar || a.dest.toUpperCase()}]` : `[${a.flags[0]}]`));
    return `usage: ${this.prog} ${parts.join(' ')}`;
  }

  formatHelp() {
    const lines = [this.formatUsage(), ''];
    if (this.description) lines.push(this.description, '');
    lines.push('options:');
    for (const a of this.actions) {
      const flags = a.flags.map((f) => (a.action === 'store' ? `${f} ${a.metavar || a.dest.toUpperCase()}` : f)).join(', ');
      lines.push(`  ${flags.padEnd(24)} ${a.help}`);
    }
    return lines.join('\n');
  }

  error(message) {
    process.stderr.write(`${this.formatUsage()}\n${this.prog}: error: ${message}\n`);
    process.exit(2);
  }

  /** The namespace of parsed values ({dest: value}). */
  parseArgs(argv = process.argv.slice(2)) {
    const ns = {};
    for (const a of this.actions) if (a.action !== 'help') ns[a.dest] = a.default;
    for (let i = 0; i < argv.length; i++) {
      let arg = argv[i];
      let value;
      const eq = arg.indexOf('=');
      if (arg.startsWith('--') && eq > 0) { value = arg.slice(eq + 1); arg = arg.slice(0, eq); }
      const a = this.actions.find((x) => x.flags.includes(arg));
      if (!a) this.error(`unrecognized arguments: ${argv[i]}`);
      if (a.action === 'help') { process.stdout.write(`${this.formatHelp()}\n`); process.exit(0); }
      if (a.action === 'store_true') {
        if (value !== undefined) this.error(`argument ${arg}: ignored explicit argument '${value}'`);
        ns[a.dest] = true;
        continue;
      }
      if (value === undefined) {
        if (i + 1 >= argv.length || /^--?[a-z]/i.test(argv[i + 1])) this.error(`argument ${arg}: expected one argument`);
        value = argv[++i];
      }
      if (a.type === 'str') { ns[a.dest] = value; continue; }
      const n = Number(value);
      if (value.trim() === '' || Number.isNaN(n) || (a.type === 'int' && !Number.isInteger(n))) {
        this.error(`argument ${a.flags.join('/')}: invalid ${a.type} value: '${value}'`);
      }
      ns[a.dest] = n;
    }
    return ns;
  }
}

module.exports = { ArgumentParser };
