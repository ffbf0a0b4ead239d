// argparse.js - the part of Python's argparse the ported examples use, so that they take the
// original programs' flags unchanged: addArgument(flag, {type: 'int' | 'float' | 'str', default,
// help, required, action: 'store_true'}), addSubparsers({dest}) with addParser(name), parseArgs.
// Each value lands under the flag's name camelCased (`--dry-run` -> dryRun, `--batchSize` ->
// batchSize, `--upscale_factor` -> upscaleFactor), as kindling spells PyTorch's names.
// Wrong input prints the usage and an argparse-style error and exits with status 2; -h prints help.
'use strict';

const camel = (flag) => flag.replace(/^-+/, '').replace(/[-_]+([a-zA-Z0-9])/g, (m, c) => c.toUpperCase());

class ArgumentParser {
  constructor({ description = '', prog = process.argv[1] ? require('node:path').basename(process.argv[1]) : 'main.js' } = {}) {
    this.description = description;
    this.prog = prog;
    this.args = [];
    this.sub = null;
  }

  addArgument(flag, { type = 'str', default: def = null, help = '', required = false, action = null } = {}) {
    const a = { flag, dest: camel(flag), type, help, required, action, default: action === 'store_true' ? Boolean(def) : def };
    this.args.push(a);
    return a;
  }

  addSubparsers({ title = 'subcommands', dest }) {
    const parsers = new Map();
    this.sub = { title, dest, parsers };
    return { addParser: (name, { help = '' } = {}) => {
      const p = new ArgumentParser({ description: help, prog: `${this.prog} ${name}` });
      parsers.set(name, p);
      return p;
    } };
  }

  usage() {
    const flags = this.args.map((a) => (a.required ? `${a.flag} ${a.dest.toUpperCase()}` : `[${a.flag}${a.action ? '' : ` ${a.dest.toUpperCase()}`}]`));
    const sub = this.sub ? ` {${[...this.sub.parsers.keys()].join(',')}} ...` : '';
    return `usage: ${this.prog} [-h] ${flags.join(' ')}${sub}`;
  }

  help() {
    const lines = [this.usage(), ''];
    if (this.description) lines.push(this.description, '');
    if (this.sub) for (const [name, p] of this.sub.parsers) lines.push(`  ${name.padEnd(24)}${p.description}`);
    for (const a of this.args) {
      const def = a.default !== null && !a.action ? ` (default: ${a.default})` : '';
      lines.push(`  ${a.flag.padEnd(24)}${a.help}${def}`);
    }
    return lines.join('\n');
  }

  error(message) {
    process.stderr.write(`${this.usage()}\n${this.prog}: error: ${message}\n`);
    process.exit(2);
  }

  convert(a, text) {
    if (a.type === 'int') {
      if (!/^[-+]?\d+$/.test(text)) this.error(`argument ${a.flag}: invalid int value: '${text}'`);
      return Number.parseInt(text, 10);
    }
    if (a.type === 'float') {
      const v = Number(text);
      if (text.trim() === '' || Number.isNaN(v) && text !== 'nan') this.error(`argument ${a.flag}: invalid float value: '${text}'`);
      return v;
    }
    return text;
  }

  parseArgs(argv = process.argv.slice(2)) {
    const out = {};
    for (const a of this.args) out[a.dest] = a.default;
    const seen = new Set();
    for (let i = 0; i < argv.length; i++) {
      const tok = argv[i];
      if (tok === '-h' || tok === '--help') {
        process.stdout.write(`${this.help()}\n`);
        process.exit(0);
      }
      if (this.sub && !tok.startsWith('-')) {
        const p = this.sub.parsers.get(tok);
        if (!p) this.error(`argument ${this.sub.dest}: invalid choice: '${tok}' (choose from ${[...this.sub.parsers.keys()].map((k) => `'${k}'`).join(', ')})`);
        return Object.assign(out, { [this.sub.dest]: tok }, p.parseArgs(argv.slice(i + 1)));
      }
      const eq = tok.indexOf('=');
      const flag = eq > 0 ? tok.slice(0, eq) : tok;
      const a = this.args.find((x) => x.flag === flag);
      if (!a) this.error(`unrecognized arguments: ${argv.slice(i).join(' ')}`);
      seen.add(a);
      if (a.action === 'store_true') {
        if (eq > 0) this.error(`argument ${a.flag}: ignored explicit argument '${tok.slice(eq + 1)}'`);
        out[a.dest] = true;
        continue;
      }
      let text = eq > 0 ? tok.slice(eq + 1) : argv[++i];
      if (text === undefined) this.error(`argument ${a.flag}: expected one argument`);
      out[a.dest] = this.convert(a, text);
    }
    const missing = this.args.filter((a) => a.required && !seen.has(a)).map((a) => a.flag);
    if (missing.length) this.error(`the following arguments are required: ${missing.join(', ')}`);
    if (this.sub && !(this.sub.dest in out)) out[this.sub.dest] = null;
    return out;
  }
}

/** Python's repr of an argparse Namespace, for the examples' print(opt). */
function namespace(opt) {
  const repr = (v) => (v === null || v === undefined ? 'None' : typeof v === 'boolean' ? (v ? 'True' : 'False')
    : typeof v === 'string' ? `'${v}'` : String(v));
  return `Namespace(${Object.entries(opt).map(([k, v]) => `${k}=${repr(v)}`).join(', ')})`;
}

module.exports = { ArgumentParser, namespace };
