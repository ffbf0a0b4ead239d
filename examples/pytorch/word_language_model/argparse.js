// argparse.js - the part of Python's argparse that the example's scripts use, so that their
// command lines are the originals': ArgumentParser({description}), addArgument(flag, {type,
// default, help, action: 'store_true', metavar}), parseArgs(argv) and error(message). Values are
// returned under camelCased names (--log-interval -> logInterval, --batch_size -> batchSize);
// --flag value and --flag=value are accepted; -h/--help prints the usage and exits, a bad
// command line prints the usage and the error and exits with status 2, as argparse does.
'use strict';

const path = require('node:path');

const camel = (flag) => flag.replace(/^-+/, '').replace(/[-_]([a-z0-9])/g, (_, c) => c.toUpperCase());
const TYPES = {
  int: (s) => (/^[-+]?\d+$/.test(s.trim()) ? Number(s) : undefined),
  float: (s) => (s.trim() !== '' && !Number.isNaN(Number(s)) ? Number(s) : undefined),
  str: (s) => s,
};

class ArgumentParser {
  constructor({ description = '' } = {}) {
    this.description = description;
    this.prog = path.basename(process.argv[1] || 'main.js');
    this.args = [];
  }

  addArgument(flag, { type = 'str', default: dflt = null, help = '', action = 'store', metavar = null } = {}) {
    this.args.push({ flag, type, dflt: action === 'store_true' ? false : dflt, help, action, metavar: metavar || flag.replace(/^-+/, '').replace(/-/g, '_').toUpperCase(), dest: camel(flag) });
  }

  usage() {
    const opts = this.args.map((a) => (a.action === 'store_true' ? `[${a.flag}]` : `[${a.flag} ${a.metavar}]`));
    return `usage: ${this.prog} [-h] ${opts.join(' ')}`;
  }

  help() {
    const rows = this.args.map((a) => `  ${(a.action === 'store_true' ? a.flag : `${a.flag} ${a.metavar}`).padEnd(22)} ${a.help}`);
    return `${this.usage()}\n\n${this.description}\n\noptional arguments:\n  -h, --help             show this help message and exit\n${rows.join('\n')}`;
  }

  error(message) {
    console.error(`${this.usage()}\n${this.prog}: error: ${message}`);
    process.exit(2);
  }

  parseArgs(argv = process.argv.slice(2)) {
    const out = {};
    for (const a of this.args) out[a.dest] = a.dflt;
    for (let i = 0; i < argv.length; i++) {
      const tok = argv[i];
      if (tok === '-h' || tok === '--help') {
        console.log(this.help());
        process.exit(0);
      }
      const eq = tok.indexOf('=');
      const flag = tok.startsWith('--') && eq > 0 ? tok.slice(0, eq) : tok;
      const a = this.args.find((x) => x.flag === flag);
      if (!a) this.error(`unrecognized arguments: ${tok}`);
      if (a.action === 'store_true') {
        if (flag !== tok) this.error(`argument ${a.flag}: ignored explicit argument '${tok.slice(eq + 1)}'`);
        out[a.dest] = true;
        continue;
      }
      let text;
      if (flag !== tok) text = tok.slice(eq + 1);
      else if (i + 1 < argv.length) text = argv[++i];
      else this.error(`argument ${a.flag}: expected one argument`);
      const v = TYPES[a.type](text);
      if (v === undefined) this.error(`argument ${a.flag}: invalid ${a.type} value: '${text}'`);
      out[a.dest] = v;
    }
    return out;
  }
}

module.exports = { ArgumentParser };
