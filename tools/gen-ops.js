#!/usr/bin/env node
// gen-ops.js - generates everything that comes from the op list (src/ops/oplist/*.js):
//   src/ops/ops_gen.h        op ids (enum kd_op_id)
//   src/ops/op_codes.gen.h   the `code` enums (KD_UNARY_*, KD_REDUCE_*, ...), one per code prefix
//   src/ops/ops_gen.c        op table (schemas, defaults, flags) and kernel[op][key] table
//   src/ops/backward_gen.c   the backward formulas compiled to C (tools/gen-backward.js)
//   lib/ops.gen.js           kd.<op> functions and Tensor.prototype.<op> methods
//   lib/ops.gen.mjs          the kd.<op> functions as ESM named exports (for lib/index.mjs, which
//                            tools/gen-esm.js writes from the CommonJS exports; `npm run gen` runs both)
//   types/ops.gen.d.ts       their TypeScript declarations
//   docs/OPS.md              the op reference
// Usage: node tools/gen-ops.js            write the files
//        node tools/gen-ops.js --check    exit 1 if any generated file is stale (used by tests)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const oplist = require(path.join(root, 'src', 'ops', 'oplist'));
const { genBackward } = require('./gen-backward');

const ARG_TYPES = {
  'Tensor': 'KD_ARG_TENSOR', 'Tensor?': 'KD_ARG_TENSOR_OPT', 'Tensor|Scalar': 'KD_ARG_TENSOR_OR_SCALAR',
  'Scalar': 'KD_ARG_SCALAR', 'Scalar?': 'KD_ARG_SCALAR_OPT', 'int': 'KD_ARG_INT', 'int?': 'KD_ARG_INT_OPT',
  'int|int[]': 'KD_ARG_INT_OR_INTLIST', 'int[]': 'KD_ARG_INTLIST', 'int[]?': 'KD_ARG_INTLIST_OPT',
  'float': 'KD_ARG_DOUBLE', 'bool': 'KD_ARG_BOOL', 'dtype?': 'KD_ARG_DTYPE_OPT', 'device?': 'KD_ARG_DEVICE_OPT',
  'str?': 'KD_ARG_STRING_OPT', 'Tensor[]': 'KD_ARG_TENSORLIST', 'float?': 'KD_ARG_DOUBLE_OPT', 'bool?': 'KD_ARG_BOOL_OPT',
  'str': 'KD_ARG_STRING', 'Tensor?[]': 'KD_ARG_TENSORLIST_OPT', 'float[]?': 'KD_ARG_DOUBLELIST_OPT',
};
const FLAGS = { nondiff: 'KD_OP_FLAG_NONDIFF', cross_device: 'KD_OP_FLAG_CROSS_DEVICE' };

function parseArgs(s) {
  const args = [];
  let kwonly = false;
  for (const raw of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (raw === '*') { kwonly = true; continue; }
    const m = /^(\S+)\s+(\w+)(?:=(.+))?$/.exec(raw);
    // int[N] / int[N]?: PyTorch's fixed-size int list (IntArrayRef[N]), which also takes one int
    // (repeated N times: logsumexp(x, 1)); to C it is an int[] like any other.
    const fixed = m && /^int\[([1-3])\](\??)$/.exec(m[1]);
    const type = fixed ? `int[]${fixed[2]}` : m && m[1];
    if (!m || !ARG_TYPES[type]) throw new Error(`bad arg '${raw}' in '${s}'`);
    args.push({ type, name: m[2], def: m[3], kwonly, ...(fixed ? { size: Number(fixed[1]) } : {}) });
  }
  return args;
}

function parseReturns(r) {
  if (r === 'Tensor') return { kind: 'tensor', n: 1 };
  if (r === 'Tensor[]') return { kind: 'list', n: -1 };
  // a JS boolean (allclose, equal): the kernel returns a 0-d bool tensor, which JS reads and frees
  if (r === 'bool') return { kind: 'bool', n: 1 };
  const m = /^\((.*)\)$/.exec(r);
  if (!m) throw new Error(`bad returns '${r}'`);
  const names = m[1].split(',').map((x) => x.trim().split(/\s+/)[1]);
  return { kind: 'tuple', n: names.length, names };
}

// Expand the list: inplace variants become ops of their own ('add_').
const ops = [];
for (const e of oplist) {
  const args = parseArgs(e.args);
  const ret = parseReturns(e.returns);
  const base = { ...e, args, ret, flags: (e.flags || []).map((f) => FLAGS[f]), ns: e.ns || [''], autocast0: e.autocast };
  if (e.kind === 'factory') base.flags.push('KD_OP_FLAG_FACTORY');
  if (e.kind === 'view') base.flags.push('KD_OP_FLAG_VIEW');
  if (e.cpuScalars) base.flags.push('KD_OP_FLAG_CPU_SCALARS');
  if (!e.inplaceOnly) ops.push({ ...base, variants: e.variants.filter((v) => v !== 'inplace') });
  if (e.variants.includes('inplace')) {
    // 'clamp.Tensor' -> 'clamp_.Tensor': the JS name of an overload's in-place form ends in '_' too
    ops.push({ ...base, name: e.name.replace(/^[^.]+/, (m) => m + '_'), variants: ['method'], inplace: true,
      flags: [...base.flags, 'KD_OP_FLAG_INPLACE'], doc: `In-place ${e.name}: ${e.doc}` });
  }
}
// `jsname` (optional): the JS name when it differs from the op's name, for ops that share a JS
// name with another op in another namespace (kd.linalg.norm is op 'linalgNorm', kd.norm is 'norm').
ops.forEach((o, i) => { o.id = i; o.cname = o.name.replace('.', '_'); o.jsname = o.jsname || o.name.split('.')[0]; });
{
  const seen = new Map();
  for (const o of ops) {
    if (seen.has(o.name)) throw new Error(`op '${o.name}' is declared twice (${seen.get(o.name)} and ${o.family})`);
    seen.set(o.name, o.family);
  }
}

// Aliases (src/ops/aliases.js): o.aliases = [{ ns, name }] on every function overload of the op.
{
  const table = require(path.join(root, 'src', 'ops', 'aliases.js'));
  const taken = new Set(ops.filter((o) => o.variants.includes('function')).flatMap((o) => o.ns.map((n) => `${n}.${o.jsname}`)));
  for (const o of ops) o.aliases = [];
  for (const [full, target] of Object.entries(table)) {
    const dot = full.lastIndexOf('.');
    const ns = dot < 0 ? '' : full.slice(0, dot), name = full.slice(dot + 1);
    if (!ns) throw new Error(`aliases.js: '${full}' needs a namespace`);
    if (taken.has(`${ns}.${name}`)) throw new Error(`aliases.js: '${full}' is already an op's name`);
    taken.add(`${ns}.${name}`);
    const fns = ops.filter((o) => o.jsname === target && o.variants.includes('function'));
    if (!fns.length) throw new Error(`aliases.js: '${full}' names '${target}', which is no function op`);
    for (const o of fns) o.aliases.push({ ns, name });
  }
}

// Autocast policies: src/ops/autocast_policy.js by base name, or an entry's own `autocast: {cpu,
// cuda}` field; out-of-place ops only (PyTorch never autocasts in-place ops). o.autocast = {cpu, cuda}.
const AUTOCAST_DEVS = ['cpu', 'cuda']; // the order of enum kd_autocast_dev (src/dispatch/autocast.h)
const AUTOCAST_C = { lower: 'KD_AUTOCAST_LOWER', fp32: 'KD_AUTOCAST_FP32', fp32SetOptDtype: 'KD_AUTOCAST_FP32_SET_OPT_DTYPE',
  promote: 'KD_AUTOCAST_PROMOTE', banned: 'KD_AUTOCAST_BANNED', native: 'KD_AUTOCAST_NATIVE' };
const autocastTable = require(path.join(root, 'src', 'ops', 'autocast_policy.js'));
const autocastMissing = { cpu: [], cuda: [] };
{
  const byName = {};
  for (const dev of AUTOCAST_DEVS) {
    byName[dev] = new Map();
    for (const [pol, names] of Object.entries(autocastTable[dev] || {})) {
      if (!AUTOCAST_C[pol]) throw new Error(`autocast_policy.js: unknown policy '${pol}'`);
      for (const n of names) {
        if (byName[dev].has(n)) throw new Error(`autocast_policy.js: '${n}' twice for ${dev}`);
        byName[dev].set(n, pol);
      }
    }
  }
  for (const o of ops) {
    o.autocast = {};
    if (o.inplace) continue;
    for (const dev of AUTOCAST_DEVS) {
      const own = o.autocast0 && o.autocast0[dev];
      const pol = own !== undefined ? own : byName[dev].get(o.name.split('.')[0]);
      if (pol && !AUTOCAST_C[pol]) throw new Error(`op '${o.name}': unknown autocast policy '${pol}'`);
      if (pol) o.autocast[dev] = pol;
    }
  }
  const have = new Set(ops.map((o) => o.name.split('.')[0]));
  for (const dev of AUTOCAST_DEVS) autocastMissing[dev] = [...byName[dev].keys()].filter((n) => !have.has(n));
}
const hasAutocast = (o) => Object.keys(o.autocast).length > 0;

// The `code` values: one C enum per prefix (KD_UNARY_NEG -> enum kd_unary_code), values from 1 in
// order of first use, so a family adds codes by using them in its op-list entries.
function codeEnums() {
  const enums = new Map();
  for (const e of oplist) {
    if (!e.code) continue;
    const m = /^KD_([A-Z0-9]+)_[A-Z0-9_]+$/.exec(e.code);
    if (!m) throw new Error(`op '${e.name}': code '${e.code}' must look like KD_<GROUP>_<NAME>`);
    const g = m[1].toLowerCase();
    if (!enums.has(g)) enums.set(g, []);
    if (!enums.get(g).includes(e.code)) enums.get(g).push(e.code);
  }
  return enums;
}

// ---------------------------------------------------------------- C
function cValue(a) {
  const d = a.def;
  if (d === undefined) return null;
  switch (a.type) {
    case 'int': case 'int?': return `{.kind = KD_VALUE_INT, .v = {.i = ${d}}}`;
    case 'bool': return `{.kind = KD_VALUE_BOOL, .v = {.b = ${d === 'true'}}}`;
    case 'float': case 'float?': return `{.kind = KD_VALUE_DOUBLE, .v = {.d = ${d}}}`;
    case 'bool?': return `{.kind = KD_VALUE_BOOL, .v = {.b = ${d === 'true'}}}`;
    case 'str': {
      if (!/^'[\w-]*'$/.test(d)) throw new Error(`str default must be a quoted word: ${d}`);
      return `{.kind = KD_VALUE_STRING, .v = {.str = "${d.slice(1, -1)}"}}`;
    }
    case 'Scalar': case 'Scalar?':
      return /^-?\d+$/.test(d) ? `{.kind = KD_VALUE_SCALAR, .v = {.s = {.kind = KD_KIND_INT, .v = {.i = ${d}}}}}`
        : `{.kind = KD_VALUE_SCALAR, .v = {.s = {.kind = KD_KIND_FLOAT, .v = {.f = ${d}}}}}`;
    default: throw new Error(`no C default for ${a.type}`);
  }
}

const header = (what) => `/* ${what} - GENERATED by tools/gen-ops.js from src/ops/oplist/. Do not edit. */\n`;

function genH() {
  let s = header('ops_gen.h: op ids');
  s += '#ifndef KD_OPS_GEN_H\n#define KD_OPS_GEN_H\n\ntypedef enum kd_op_id {\n';
  for (const o of ops) s += `  KD_OP_${o.cname} = ${o.id},\n`;
  s += `  KD_OP_COUNT = ${ops.length}\n} kd_op_id;\n\n#endif\n`;
  return s;
}

function genCodes() {
  let s = header('op_codes.gen.h: the `code` values of the op list: which operation a shared kernel performs');
  s += '#ifndef KD_OP_CODES_GEN_H\n#define KD_OP_CODES_GEN_H\n\n';
  for (const [g, codes] of codeEnums()) {
    s += `enum kd_${g}_code {\n`;
    codes.forEach((c, i) => { s += `  ${c} = ${i + 1},\n`; });
    s += '};\n';
  }
  return s + '\n#endif\n';
}

function genC() {
  const kernels = new Set();
  for (const o of ops) for (const k of [o.cpu, o.generic, o.composite]) if (k) kernels.add(k);
  if (ops.some(hasAutocast)) kernels.add('kd_autocast_kernel');
  let s = header('ops_gen.c: the op table and the kernel table');
  s += '#include "dispatch/autocast.h"\n#include "dispatch/dispatch.h"\n#include "ops/op_codes.gen.h"\n\n';
  for (const k of [...kernels].sort()) s += `kd_status ${k}(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);\n`;
  s += '\n';
  for (const o of ops) {
    s += `static const kd_arg_schema kd_args_${o.cname}[] = {\n`;
    for (const a of o.args) {
      const v = cValue(a);
      s += `    {"${a.name}", ${ARG_TYPES[a.type]}, ${v ? 'true' : 'false'}, ${v || '{.kind = KD_VALUE_NONE}'}},\n`;
    }
    if (!o.args.length) s += '    {0},\n';
    s += '};\n';
  }
  s += '\nconst kd_op_info kd_ops[KD_OP_COUNT] = {\n';
  for (const o of ops) {
    const dev = o.args.findIndex((a) => a.type === 'device?');
    const dt = o.args.findIndex((a) => a.type === 'dtype?');
    s += `    [KD_OP_${o.cname}] = {"${o.name}", KD_OP_${o.cname}, ${o.code || 0}, ${o.flags.join(' | ') || 0}, ` +
      `${o.args.length}, kd_args_${o.cname}, ${o.ret.n}, ${dev}, ${dt}},\n`;
  }
  s += '};\n\nkd_kernel_fn kd_kernel_table[KD_OP_COUNT][KD_KEY_COUNT] = {\n';
  for (const o of ops) {
    const slots = [];
    if (o.composite) slots.push(`[KD_KEY_CPU] = ${o.composite}`, `[KD_KEY_CUDA] = ${o.composite}`, `[KD_KEY_AUTOGRAD] = ${o.composite}`);
    else if (o.generic) slots.push(`[KD_KEY_CPU] = ${o.generic}`, `[KD_KEY_CUDA] = ${o.generic}`);
    else if (o.cpu) slots.push(`[KD_KEY_CPU] = ${o.cpu}`);
    if (hasAutocast(o)) slots.push('[KD_KEY_AUTOCAST] = kd_autocast_kernel');
    s += `    [KD_OP_${o.cname}] = {${slots.join(', ')}},\n`;
  }
  s += '};\n';
  s += '\n/* autocast policy per op and device type (src/ops/autocast_policy.js); 0: falls through */\n';
  s += 'const unsigned char kd_op_autocast_policy[KD_OP_COUNT][KD_AUTOCAST_NDEV] = {\n';
  for (const o of ops.filter(hasAutocast)) {
    s += `    [KD_OP_${o.cname}] = {${AUTOCAST_DEVS.map((d) => (o.autocast[d] ? AUTOCAST_C[o.autocast[d]] : '0')).join(', ')}},\n`;
  }
  s += '};\n';
  return s;
}

// ---------------------------------------------------------------- JS
// Op names that are JS reserved words (kd.var): their function declarations and ESM bindings
// use the name with a trailing underscore, exported under the op's name.
const RESERVED = new Set(['var', 'delete', 'new', 'in', 'function', 'default', 'void', 'typeof']);
const jsIdent = (n) => (RESERVED.has(n) ? `${n}_` : n);
function jsGroups() {
  const groups = new Map();
  for (const o of ops) {
    for (const v of o.variants) {
      // an op renamed by `jsname` lives in its own namespace: its group is keyed by it
      const key = o.jsname !== o.name.split('.')[0] ? `${v}:${o.ns[0]}.${o.jsname}` : `${v}:${o.jsname}`;
      if (!groups.has(key)) groups.set(key, { key, variant: v, name: o.jsname, overloads: [] });
      groups.get(key).overloads.push(o);
    }
  }
  return [...groups.values()];
}

// The type as the op list spells it (int[1] for a fixed-size list).
const schemaType = (a) => (a.size ? a.type.replace('[]', `[${a.size}]`) : a.type);

function jsSchema(o) {
  return `{ name: ${JSON.stringify(o.name)}, fn: N[${JSON.stringify(o.name)}], ret: ${JSON.stringify(o.ret.kind)}` +
    (o.ret.names ? `, names: ${JSON.stringify(o.ret.names)}` : '') + (o.inplace ? ', inplace: true' : '') + (o.varargs ? ', varargs: true' : '') +
    (o.numberSelf && !o.inplace ? ', numberSelf: true' : '') +
    `, args: [${o.args.map((a) => `[${JSON.stringify(a.name)}, ${JSON.stringify(schemaType(a))}, ${a.kwonly}, ${a.def !== undefined || a.type.endsWith('?')}]`).join(', ')}] }`;
}

// A fast path for the common call shape: one overload, no options object, every argument
// positional, tensors where tensors go. Anything else goes through rt.invoke (full binding
// and clear errors).
// `h === a0._h ? a0 : ` for each tensor parameter: an op that returns an input unchanged returns
// the same Tensor object (see sameInput in lib/args.js).
function firstTensor(params, isMethod) {
  return params.map((a, i) => (a.type === 'Tensor' ? `h === a${i}._h ? a${i} : ` : '')).join('');
}

function jsFast(g) {
  if (g.overloads.length !== 1) return null;
  const o = g.overloads[0];
  const isMethod = g.variant !== 'function';
  const params = o.args.filter((a) => !a.kwonly).slice(isMethod ? 1 : 0);
  if (params.some((a) => a.type === 'int[]' || a.type === 'Tensor[]' || a.type === 'int|int[]' || a.type === 'int[]?')) return null;
  const nparams = params.length;
  const lines = [];
  const names = params.map((_, i) => `a${i}`);
  const call = [];
  if (isMethod) call.push('this._h');
  params.forEach((a, i) => {
    const v = names[i];
    if (a.type === 'Tensor') { lines.push(`if (!(${v} instanceof Tensor)) break fast;`); call.push(`${v}._h`); }
    else if (a.type === 'Tensor|Scalar') {
      lines.push(`const h${i} = ${v} instanceof Tensor ? ${v}._h : ${v};`);
      lines.push(`if (h${i} === ${v} && typeof ${v} !== 'number' && typeof ${v} !== 'boolean') break fast;`);
      call.push(`h${i}`);
    } else if (a.type === 'Tensor?') { lines.push(`if (${v} != null && !(${v} instanceof Tensor)) break fast;`); call.push(`${v} == null ? ${v} : ${v}._h`); }
    else {
      lines.push(`if (${v} !== null && typeof ${v} === 'object') break fast;`);
      call.push(v);
    }
  });
  for (const a of o.args.filter((x) => x.kwonly)) call.push('undefined');
  const ret = o.inplace ? `N[${JSON.stringify(o.name)}](${call.join(', ')}); return this;`
    : o.ret.kind === 'tensor' ? `const h = N[${JSON.stringify(o.name)}](${call.join(', ')}); return ${isMethod ? 'h === this._h ? this : ' : ''}${firstTensor(params, isMethod)}new Tensor(h);`
      : o.ret.kind === 'list' ? `return rt.wrapList(N[${JSON.stringify(o.name)}](${call.join(', ')}));`
        : o.ret.kind === 'bool' ? `return rt.wrapBool(N[${JSON.stringify(o.name)}](${call.join(', ')}));`
        : `return rt.wrapTuple(N[${JSON.stringify(o.name)}](${call.join(', ')}), ${JSON.stringify(o.ret.names)});`;
  return { names, body: `  fast: if (arguments.length <= ${nparams}) {\n${lines.map((l) => '    ' + l).join('\n')}${lines.length ? '\n' : ''}    ${ret}\n  }\n` };
}

function genJS() {
  let s = `// lib/ops.gen.js - GENERATED by tools/gen-ops.js from src/ops/oplist/. Do not edit.\n`;
  s += `// Installs kd.<op> functions and Tensor.prototype.<op> methods. Fast paths handle plain\n`;
  s += `// positional calls; everything else (options objects, varargs shapes, errors) goes\n`;
  s += `// through rt.invoke, which binds arguments by the op's schema (lib/args.js).\n'use strict';\n\n`;
  s += `module.exports = function install(Tensor, kd, N, rt) {\n  const G = {\n`;
  for (const g of jsGroups()) s += `    ${JSON.stringify(g.key)}: [${g.overloads.map(jsSchema).join(',\n      ')}],\n`;
  s += '  };\n';
  for (const g of jsGroups()) {
    const key = JSON.stringify(g.key);
    const fast = jsFast(g);
    const params = fast ? fast.names.join(', ') : '';
    const nss = g.variant === 'function' ? [...new Set(g.overloads.flatMap((o) => o.ns))] : [];
    const target = g.variant === 'function' ? (nss[0] ? `rt.namespace(kd, ${JSON.stringify(nss[0])}).${g.name}` : `kd.${g.name}`)
      : `Tensor.prototype.${g.name}`;
    s += `  ${target} = function ${jsIdent(g.name)}(${params}) {\n`;
    s += '    if (rt.modeActive) rt.syncMode(); // Note [Grad modes and async functions] in lib/autograd.js\n';
    if (fast) s += fast.body;
    s += `    return rt.invoke(G[${key}], ${g.variant === 'function' ? 'null' : 'this'}, arguments);\n  };\n`;
    for (const ns of nss.slice(1)) s += `  ${ns ? `rt.namespace(kd, ${JSON.stringify(ns)})` : 'kd'}.${g.name} = ${target};\n`;
    if (g.variant === 'function') {
      const seen = new Set();
      for (const a of g.overloads.flatMap((o) => o.aliases)) {
        if (seen.has(`${a.ns}.${a.name}`)) continue;
        seen.add(`${a.ns}.${a.name}`);
        s += `  rt.namespace(kd, ${JSON.stringify(a.ns)}).${a.name} = ${target}; // alias\n`;
      }
    }
  }
  s += '  return G;\n};\n';
  return s;
}

// ESM named exports must be listed statically; lib/index.mjs re-exports this file. Reserved
// names are bound to name_ and exported under the op's name (`export { var_ as var }`).
function genMJS() {
  const names = [...new Set(jsGroups().filter((g) => g.variant === 'function' && g.overloads.some((o) => o.ns.includes('')))
    .map((g) => g.name))];
  const reserved = names.filter((n) => RESERVED.has(n));
  let s = `// lib/ops.gen.mjs - GENERATED by tools/gen-ops.js from src/ops/oplist/. Do not edit.\n`;
  s += `import kd from './index.js';\n\nexport const {\n`;
  for (const n of names.filter((x) => !RESERVED.has(x))) s += `  ${n},\n`;
  s += '} = kd;\n';
  if (reserved.length) {
    s += `\nconst { ${reserved.map((n) => `${n}: ${jsIdent(n)}`).join(', ')} } = kd;\n`;
    s += `export { ${reserved.map((n) => `${jsIdent(n)} as ${n}`).join(', ')} };\n`;
  }
  return s;
}

// ---------------------------------------------------------------- TypeScript
const TS_TYPES = {
  'Tensor': 'Tensor', 'Tensor?': 'Tensor | null', 'Tensor|Scalar': 'Tensor | number | boolean',
  'Scalar': 'number | boolean', 'Scalar?': 'number | boolean | null', 'int': 'number', 'int?': 'number | null',
  'int|int[]': 'number | readonly number[]', 'int[]': 'readonly number[]', 'int[]?': 'number | readonly number[] | null',
  'float': 'number', 'bool': 'boolean', 'dtype?': 'DTypeLike | null', 'device?': 'DeviceLike | null', 'str?': 'string | null',
  'Tensor[]': 'readonly Tensor[]', 'float?': 'number | null', 'bool?': 'boolean | null', 'str': 'string',
  'Tensor?[]': 'readonly (Tensor | null)[]', 'float[]?': 'number | readonly number[] | null',
};

// int[N] also takes one number
const tsType = (a) => (a.size && a.type === 'int[]' ? TS_TYPES['int|int[]'] : TS_TYPES[a.type]);

function tsSig(o, isMethod) {
  const args = o.args.slice(isMethod ? 1 : 0);
  const pos = args.filter((a) => !a.kwonly);
  const optional = (a) => a.def !== undefined || a.type.endsWith('?');
  // Record<string, never>, not {}: an empty object type would accept any value (max(1) must
  // not match max(options?)).
  // factories also take requiresGrad (handled in lib/autograd.js)
  const rg = o.kind === 'factory' ? '; requiresGrad?: boolean' : '';
  // numberSelf: the function form takes a number as self (kd.pow(2, t))
  const argType = (a) => (o.numberSelf && !isMethod && a === o.args[0] ? 'Tensor | number | boolean' : tsType(a));
  const opts = args.length ? `options?: { ${args.map((a) => `${a.name}?: ${argType(a)}`).join('; ')}${rg} }`
    : 'options?: Record<string, never>';
  const ret = o.inplace ? 'this' : o.ret.kind === 'tensor' ? 'Tensor' : o.ret.kind === 'list' ? 'Tensor[]'
    : o.ret.kind === 'bool' ? 'boolean' : `Tensor[] & { ${o.ret.names.map((n) => `${n}: Tensor`).join('; ')} }`;
  const sigs = [];
  // positional form; a required arg after an optional one cannot be optional in TS
  let lastRequired = -1;
  pos.forEach((a, i) => { if (!optional(a)) lastRequired = i; });
  const posStr = pos.map((a, i) => `${a.name}${optional(a) && i > lastRequired ? '?' : ''}: ${argType(a)}${optional(a) && i <= lastRequired ? ' | undefined' : ''}`);
  sigs.push(`(${[...posStr, opts].join(', ')}): ${ret}`);
  if (pos.length === 1 && pos[0].type === 'int[]') sigs.push(`(...${pos[0].name}: number[]): ${ret}`);
  if (o.varargs && pos.length && pos[pos.length - 1].type === 'Tensor[]') {
    sigs.push(`(${[...posStr.slice(0, -1), `...${pos[pos.length - 1].name}: Tensor[]`].join(', ')}): ${ret}`);
    // the tensors spread, then the keyword options: meshgrid(x, y, {indexing: 'xy'})
    const kw = args.filter((a) => a.kwonly);
    if (kw.length && pos.length === 1) sigs.push(`(...args: [...${pos[0].name}: Tensor[], options: { ${kw.map((a) => `${a.name}?: ${tsType(a)}`).join('; ')} }]): ${ret}`);
  }
  // everything by name
  if (pos.length) sigs.push(`(${args.length ? `options: { ${args.map((a) => `${a.name}${optional(a) ? '?' : ''}: ${argType(a)}`).join('; ')} }` : ''}): ${ret}`);
  return sigs;
}

function genTS() {
  let s = `// types/ops.gen.d.ts - GENERATED by tools/gen-ops.js from src/ops/oplist/. Do not edit.\n`;
  s += `import type { Tensor, DTypeLike, DeviceLike } from './index';\n\n`;
  const groups = jsGroups();
  s += 'export interface TensorOpMethods {\n';
  for (const g of groups.filter((x) => x.variant !== 'function')) {
    for (const o of g.overloads) {
      s += `  /** ${o.doc} */\n`;
      for (const sig of tsSig(o, true)) s += `  ${g.name}${sig};\n`;
    }
  }
  s += '}\n\n';
  const fns = groups.filter((x) => x.variant === 'function');
  const nss = [...new Set(fns.flatMap((g) => g.overloads.flatMap((o) => [...o.ns, ...o.aliases.map((a) => a.ns)])))].sort();
  for (const ns of nss) {
    const ind = ns ? '  ' : '';
    if (ns) s += `\nexport declare namespace ${ns} {\n`;
    for (const g of fns) {
      for (const o of g.overloads.filter((x) => x.ns.includes(ns))) {
        s += `${ind}/** ${o.doc} */\n`;
        for (const sig of tsSig(o, false)) s += `${ind}${ns ? '' : RESERVED.has(g.name) ? 'declare ' : 'export declare '}function ${jsIdent(g.name)}${sig};\n`;
      }
      for (const o of g.overloads) {
        for (const a of o.aliases.filter((x) => x.ns === ns)) {
          s += `${ind}/** Alias of ${o.ns[0] ? o.ns[0] + '.' : ''}${g.name}: ${o.doc} */\n`;
          for (const sig of tsSig(o, false)) s += `${ind}function ${jsIdent(a.name)}${sig};\n`;
        }
      }
    }
    if (ns) s += '}\n';
  }
  for (const g of fns) if (RESERVED.has(g.name) && g.overloads.some((o) => o.ns.includes(''))) s += `export { ${jsIdent(g.name)} as ${g.name} };\n`;
  return s;
}

// ---------------------------------------------------------------- docs
// Which ops have CUDA kernels: the CPU kernels the bridge shares with CUDA (their device hook sends
// CUDA outputs to the CUDA library) and the ops it registers directly (src/cuda_bridge/bridge.c).
function cudaKernels() {
  const f = path.join(root, 'src', 'cuda_bridge', 'bridge.c');
  const src = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
  const m = /kd_cuda_shared_kernels\[\]\s*=\s*\{([^}]*)\}/.exec(src);
  const shared = new Set(m ? m[1].replace(/\/\*[\s\S]*?\*\//g, '').split(',').map((x) => x.trim()).filter(Boolean) : []);
  const direct = new Set([...src.matchAll(/kd_dispatch_register\(KD_OP_(\w+),\s*KD_KEY_CUDA/g)].map((x) => x[1]));
  return { shared, direct };
}

// The dtypes each op's parity fixtures run it on without error (test/fixtures/*.json): the dtypes
// of the first tensor argument, so "tested" means compared with PyTorch.
function fixtureDtypes() {
  const dir = path.join(root, 'test', 'fixtures');
  const by = new Map();
  if (!fs.existsSync(dir)) return by;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    let cases;
    try { cases = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).cases; } catch { continue; }
    if (!Array.isArray(cases)) continue;
    for (const c of cases) {
      if (!c || !c.op || c.error || !Array.isArray(c.args)) continue;
      // factories have no tensor argument: the dtype they made
      const spec = c.args.flat().find((a) => a && typeof a === 'object' && typeof a.dtype === 'string') ||
        (c.expected && !Array.isArray(c.expected) && typeof c.expected.dtype === 'string' ? c.expected : null);
      if (!spec) continue;
      const op = c.op.replace(/^nn\.functional\./, '') + (c.form === 'inplace' ? '_' : '');
      if (!by.has(op)) by.set(op, new Set());
      by.get(op).add(spec.dtype);
    }
  }
  return by;
}

const DTYPE_ORDER = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'];
const DTYPE_SHORT = { float32: 'f32', float64: 'f64', float16: 'f16', bfloat16: 'bf16', int8: 'i8', uint8: 'u8', int16: 'i16', int32: 'i32', int64: 'i64', bool: 'bool' };

function genDocs() {
  const { shared, direct } = cudaKernels();
  const dts = fixtureDtypes();
  let s = '# Operators\n\nGENERATED by `tools/gen-ops.js` from `src/ops/oplist/`. Do not edit.\n\n';
  s += '- **dtypes**: the input dtypes the PyTorch parity suite (`test/fixtures/`) runs the op on and compares ' +
    'with PyTorch (f32 f64 f16 bf16 i8 u8 i16 i32 i64 bool); other dtypes PyTorch refuses are refused with its error.\n';
  s += '- **CPU**: `kernel` (a CPU kernel), `generic` (device-agnostic metadata kernel), `composite` (written ' +
    'with other ops through the dispatcher, so it runs wherever they do).\n';
  s += '- **CUDA**: `kernel*` = a CUDA kernel, checked against the CPU on the emulated GPU (docs/CUDA.md) but not ' +
    'yet run on a real GPU; `generic`/`composite` as for the CPU; `-` = not available on CUDA (a clean KD_NOT_SUPPORTED error).\n\n';
  s += '- **autocast**: the op\'s policy inside `kd.autocast` per device type (PyTorch 1.13\'s lists, ' +
    '`src/ops/autocast_policy.js`): `lower` (to the scope\'s float16/bfloat16), `fp32`, `fp32SetOptDtype` ' +
    '(dtype=float32 unless given), `promote` (widest floating dtype), `banned`, `native` (no cast, and none inside: a composite of what is one op in PyTorch); `-` = runs as called.\n\n';
  s += '| op | signature | kind | forms | dtypes | CPU | CUDA | autocast | description |\n|---|---|---|---|---|---|---|---|---|\n';
  for (const o of ops) {
    const forms = o.variants.flatMap((v) => (v === 'function' ? [...o.ns.map((n) => `kd.${n ? n + '.' : ''}${o.jsname}`),
      ...o.aliases.map((a) => `kd.${a.ns}.${a.name}`)] : [`t.${o.jsname}`])).join(', ');
    const cpu = o.composite ? 'composite' : o.generic ? 'generic' : o.cpu ? 'kernel' : '-';
    const cuda = o.composite ? 'composite' : o.generic ? 'generic'
      : (o.cpu && shared.has(o.cpu)) || direct.has(o.cname) ? 'kernel*' : '-';
    const path = o.jsname !== o.name.split('.')[0] ? `${o.ns[0]}.${o.jsname}${o.name.includes('.') ? o.name.slice(o.name.indexOf('.')) : ''}` : o.name;
    const set = dts.get(path) || dts.get(o.name.split('.')[0] + (o.inplace ? '_' : '')) || new Set();
    const dt = DTYPE_ORDER.filter((d) => set.has(d)).map((d) => DTYPE_SHORT[d]).join(' ') || '-';
    s += `| \`${o.name}\` | \`${o.args.map((a) => `${a.kwonly ? '*' : ''}${schemaType(a)} ${a.name}${a.def !== undefined ? '=' + a.def : ''}`).join(', ')}\` | ${o.kind} | ${forms} | ${dt} | ${cpu} | ${cuda} | ${AUTOCAST_DEVS.filter((d) => o.autocast[d]).map((d) => `${d}: ${o.autocast[d]}`).join('; ') || '-'} | ${o.doc} |\n`;
  }
  s += '\nPyTorch 1.13 autocast ops kindling does not have yet (their policies wait in `src/ops/autocast_policy.js`): ' +
    AUTOCAST_DEVS.map((d) => `${d}: ${autocastMissing[d].join(', ')}`).join('; ') + '.\n';
  return s + opinfoDocs();
}

// The samples of the covered OpInfos that pass, per device, from tools/opinfo/pass_rates.json
// (written by `node tools/opinfo/report.js --write-known`).
function opinfoPassRates() {
  const file = path.join(root, 'tools', 'opinfo', 'pass_rates.json');
  if (!fs.existsSync(file)) return '';
  const rates = JSON.parse(fs.readFileSync(file, 'utf8'));
  const pct = ([a, b]) => `${a} / ${b} (${b ? ((100 * a) / b).toFixed(2) : '-'}%)`;
  let s = '\n## PyTorch OpInfo samples kindling passes\n\n' +
    'Replayed by `test/opinfo.test.js` (the failures left are listed, each with its reason, in ' +
    '`test/opinfo_known_failures.json`):\n\n| device | forward samples | gradient samples | error samples |\n|---|---|---|---|\n';
  for (const [dev, r] of Object.entries(rates)) {
    s += `| ${dev === 'cuda' ? `CUDA (${r.device || 'GPU'})` : 'CPU'} | ${pct(r.forward)} | ${pct(r.grad)} | ${pct(r.errors)} |\n`;
  }
  return s;
}

// The section on PyTorch's OpInfo database, from tools/opinfo/coverage.json (written by
// tools/opinfo/generate.py): the OpInfos kindling does not cover, grouped, with the reason.
function opinfoDocs() {
  const file = path.join(root, 'tools', 'opinfo', 'coverage.json');
  if (!fs.existsSync(file)) return '';
  const cov = JSON.parse(fs.readFileSync(file, 'utf8'));
  const missing = cov.entries.filter((e) => e.missing);
  const covered = cov.entries.length - missing.length;
  let s = '\n## PyTorch OpInfos kindling does not cover\n\n' +
    `PyTorch ${cov.torch}'s own test database (OpInfo, \`op_db\`) has ${cov.total} entries. ${covered} of them are ` +
    'recorded by `tools/opinfo/generate.py` and replayed on kindling by `test/opinfo.test.js` ' +
    '(`npm run opinfo:report` prints the pass rates). These ' + `${missing.length} are not, by group and reason ` +
    '(from `tools/opinfo/coverage.json`):\n';
  s = opinfoPassRates() + s;
  const groups = new Map();
  for (const e of missing) {
    if (!groups.has(e.group)) groups.set(e.group, new Map());
    const reason = /^kindling has no /.test(e.missing) ? 'not in kindling yet' : e.missing;
    const by = groups.get(e.group);
    if (!by.has(reason)) by.set(reason, []);
    by.get(reason).push(e.opinfo);
  }
  for (const [group, by] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    const n = [...by.values()].reduce((k, l) => k + l.length, 0);
    s += `\n### ${group} (${n})\n\n`;
    for (const [reason, names] of [...by].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))) {
      s += `- ${reason}: ${names.map((x) => `\`${x}\``).join(', ')}\n`;
    }
  }
  return s;
}

const outputs = {
  'src/ops/ops_gen.h': genH(),
  'src/ops/op_codes.gen.h': genCodes(),
  'src/ops/ops_gen.c': genC(),
  'src/ops/backward_gen.c': genBackward(ops, header),
  'lib/ops.gen.js': genJS(),
  'lib/ops.gen.mjs': genMJS(),
  'types/ops.gen.d.ts': genTS(),
  'docs/OPS.md': genDocs(),
};

if (process.argv.includes('--check')) {
  const stale = Object.entries(outputs).filter(([f, c]) => !fs.existsSync(path.join(root, f)) || fs.readFileSync(path.join(root, f), 'utf8') !== c);
  if (stale.length) { console.error(`stale generated files: ${stale.map(([f]) => f).join(', ')} (run npm run gen)`); process.exit(1); }
} else {
  // a file whose text is unchanged keeps its timestamp, so make rebuilds only what changed
  for (const [f, c] of Object.entries(outputs)) {
    const file = path.join(root, f);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === c) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, c);
  }
  console.log(`gen-ops: ${ops.length} ops -> ${Object.keys(outputs).join(', ')}`);
}
module.exports = { ops };
