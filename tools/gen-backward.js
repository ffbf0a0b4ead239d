// gen-backward.js - compiles the `backward` formulas of the op list (src/ops/oplist/) into C
// (src/ops/backward_gen.c), as PyTorch's derivatives.yaml becomes generated autograd code.
// The expression language is documented in docs/ADDING_OPS.md (section 5); the runtime the
// generated code calls is src/autograd/formula.h. Used by tools/gen-ops.js.
'use strict';

const TENSOR_TYPES = new Set(['Tensor', 'Tensor?', 'Tensor|Scalar', 'Tensor[]', 'Tensor?[]']);
const ATTRS = { shape: 'KD_F_SHAPE', dtype: 'KD_F_DTYPE', ndim: 'KD_F_NDIM', numel: 'KD_F_NUMEL', device: 'KD_F_DEVICE',
  colMajor: 'KD_F_COL_MAJOR' };
const BINOPS = { '+': 'add', '-': 'sub', '*': 'mul', '/': 'div', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '!=': 'ne' };

function tokenize(src) {
  const toks = [];
  const re = /\s*(?:(\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)|([A-Za-z_][A-Za-z0-9_]*)|('(?:[^'\\]|\\.)*')|(<=|>=|==|!=|[-+*/()[\],.?:<>=]))/y;
  let m;
  re.lastIndex = 0;
  while (re.lastIndex < src.length) {
    const at = re.lastIndex;
    if (/^\s*$/.test(src.slice(at))) break;
    m = re.exec(src);
    if (!m) throw new Error(`cannot read '${src.slice(at)}'`);
    if (m[1] !== undefined) toks.push({ t: 'num', v: m[1] });
    else if (m[2] !== undefined) toks.push({ t: 'id', v: m[2] });
    else if (m[3] !== undefined) toks.push({ t: 'str', v: m[3].slice(1, -1) });
    else toks.push({ t: 'op', v: m[4] });
  }
  return toks;
}

function parse(src) {
  const toks = tokenize(src);
  let i = 0;
  const peek = (v) => toks[i] && toks[i].t === 'op' && toks[i].v === v;
  const eat = (v) => {
    if (!peek(v)) throw new Error(`expected '${v}' at token ${i} of '${src}'`);
    i++;
  };
  function args() {
    const out = [];
    eat('(');
    while (!peek(')')) {
      if (toks[i] && toks[i].t === 'id' && toks[i + 1] && toks[i + 1].t === 'op' && toks[i + 1].v === '=') {
        const name = toks[i].v;
        i += 2;
        out.push({ name, e: expr() });
      } else out.push({ e: expr() });
      if (!peek(')')) eat(',');
    }
    eat(')');
    return out;
  }
  function primary() {
    const t = toks[i++];
    if (!t) throw new Error(`unexpected end of '${src}'`);
    if (t.t === 'num') return { k: 'num', v: t.v };
    if (t.t === 'str') return { k: 'str', v: t.v };
    if (t.t === 'op' && t.v === '(') { const e = expr(); eat(')'); return e; }
    if (t.t === 'op' && t.v === '[') {
      const items = [];
      while (!peek(']')) { items.push(expr()); if (!peek(']')) eat(','); }
      eat(']');
      return { k: 'list', items };
    }
    if (t.t === 'id') {
      if (peek('(')) return { k: 'call', name: t.v, args: args() };
      return { k: 'id', v: t.v };
    }
    throw new Error(`unexpected '${t.v}' in '${src}'`);
  }
  function postfix() {
    let e = primary();
    for (;;) {
      if (peek('.')) {
        i++;
        const name = toks[i++].v;
        if (peek('(')) e = { k: 'call', name, args: [{ e }, ...args()] };
        else e = { k: 'attr', of: e, name };
      } else if (peek('[')) {
        i++;
        const idx = expr();
        eat(']');
        e = { k: 'elem', of: e, idx };
      } else return e;
    }
  }
  function unary() {
    if (peek('-')) { i++; return { k: 'neg', e: unary() }; }
    return postfix();
  }
  function mult() {
    let e = unary();
    while (peek('*') || peek('/')) { const op = toks[i++].v; e = { k: 'bin', op, a: e, b: unary() }; }
    return e;
  }
  function additive() {
    let e = mult();
    while (peek('+') || peek('-')) { const op = toks[i++].v; e = { k: 'bin', op, a: e, b: mult() }; }
    return e;
  }
  function comparison() {
    let e = additive();
    for (const op of ['<=', '>=', '==', '!=', '<', '>']) {
      if (peek(op)) { i++; return { k: 'bin', op, a: e, b: additive() }; }
    }
    return e;
  }
  function expr() {
    const c = comparison();
    if (peek('?')) {
      i++;
      const a = expr();
      eat(':');
      return { k: 'cond', c, a, b: expr() };
    }
    return c;
  }
  const e = expr();
  if (i !== toks.length) throw new Error(`unexpected '${toks[i].v}' in '${src}'`);
  return e;
}

// Op lookup for calls: exact name ('max.dim', 'sum'), then the overloads of a JS name in list
// order, picking the first whose schema takes the given positional and keyword arguments.
function resolver(ops) {
  const byName = new Map();
  const byJs = new Map();
  for (const o of ops) {
    if (o.inplace) continue;
    byName.set(o.name, o);
    const base = o.name.split('.')[0]; // formulas name ops by their op name, not a `jsname`
    if (!byJs.has(base)) byJs.set(base, []);
    byJs.get(base).push(o);
  }
  // Static types of arguments where they are known (a forward argument's schema type, a string
  // literal) pick between overloads that differ by type (conv2dBackwardInput with int[] or str
  // padding).
  const STR = new Set(['str', 'str?']);
  const INTS = new Set(['int[]', 'int[]?', 'int|int[]']);
  const compat = (known, param) => !known || (STR.has(known) ? STR.has(param) : INTS.has(known) ? INTS.has(param) || param === 'int' : true);
  return (name, callArgs, typeOf) => {
    const npos = callArgs.filter((a) => !a.name).length;
    const kws = callArgs.filter((a) => a.name).map((a) => a.name);
    const typesOk = (o) => {
      let p = 0;
      return callArgs.every((a) => {
        const param = a.name ? o.args.find((x) => x.name === a.name) : o.args[p++];
        return !param || compat(typeOf(a.e), param.type);
      });
    };
    const fits = (o) => npos <= o.args.length && kws.every((k) => o.args.some((a) => a.name === k)) &&
      o.args.every((a, j) => j < npos || kws.includes(a.name) || a.def !== undefined || a.type.endsWith('?')) && typesOk(o);
    if (byName.has(name) && name.includes('.')) return byName.get(name);
    const cands = byJs.get(name) || (byName.has(name) ? [byName.get(name)] : []);
    const o = cands.find(fits);
    if (!o) throw new Error(`no op '${name}' taking ${npos} positional args${kws.length ? ' and ' + kws.join(', ') : ''}`);
    return o;
  };
}

function compileOp(o, resolve) {
  const argIndex = new Map(o.args.map((a, j) => [a.name, j]));
  const byValue = new Set();
  const metaOnly = new Set();
  let outsUsed = 0;
  let maxGrad = 0;
  const multi = new Map(); // the text of each call picked by `op(...)[k]` -> how often
  const nouts = o.ret.n > 0 ? o.ret.n : 64;

  function typeOf(e) {
    if (e.k === 'str') return 'str';
    if (e.k === 'id' && argIndex.has(e.v)) return o.args[argIndex.get(e.v)].type;
    return null;
  }

  function gen(e) {
    switch (e.k) {
      case 'num': return /[.e]/.test(e.v) ? `kd_f_float(${e.v})` : `kd_f_int(${e.v})`;
      case 'str': return `kd_f_str(${JSON.stringify(e.v)})`;
      case 'id': {
        const v = e.v;
        if (v === 'true' || v === 'false') return `kd_f_bool(${v})`;
        if (v === 'null') return 'kd_value_none()';
        let m = /^grad(\d*)$/.exec(v);
        if (m) { const k = m[1] ? +m[1] : 0; maxGrad = Math.max(maxGrad, k); return `kd_f_grad(c, ${k})`; }
        m = /^result(\d*)$/.exec(v);
        if (m) { const k = m[1] ? +m[1] : 0; if (k >= nouts) throw new Error(`${v}: the op has ${nouts} outputs`); outsUsed |= 1 << k; return `kd_f_out(c, ${k})`; }
        if (!argIndex.has(v)) throw new Error(`unknown name '${v}'`);
        const j = argIndex.get(v);
        if (TENSOR_TYPES.has(o.args[j].type)) byValue.add(j);
        return `kd_f_arg(c, ${j})`;
      }
      case 'attr': {
        if (!ATTRS[e.name]) throw new Error(`unknown attribute '.${e.name}'`);
        if (e.of.k === 'id' && argIndex.has(e.of.v) && TENSOR_TYPES.has(o.args[argIndex.get(e.of.v)].type)) {
          metaOnly.add(argIndex.get(e.of.v));
          return `kd_f_arg_meta(c, ${argIndex.get(e.of.v)}, ${ATTRS[e.name]})`;
        }
        return `kd_f_attr(c, ${gen(e.of)}, ${ATTRS[e.name]})`;
      }
      case 'elem':
        // output k of an op with several outputs: `lstmCellBackward(...)[1]`
        if (e.of.k === 'call' && e.idx.k === 'num' && /^\(/.test(resolve(e.of.name, e.of.args, typeOf).returns || '')) {
          const call = gen(e.of).replace(/^kd_f_call\((.*)\)$/s, '$1');
          multi.set(call, (multi.get(call) || 0) + 1);
          return `kd_f_index(${call}, ${e.idx.v})`;
        }
        return `kd_f_elem(c, ${gen(e.of)}, ${e.idx.k === 'num' ? e.idx.v : `kd_f_elem_index(${gen(e.idx)})`})`;
      case 'list': return `kd_f_list(c, ${e.items.length}, (kd_value[]){${e.items.map(gen).join(', ') || 'kd_value_none()'}})`;
      case 'neg': return `kd_f_neg(c, ${gen(e.e)})`;
      case 'bin': {
        const isNull = (x) => x.k === 'id' && x.v === 'null';
        if ((e.op === '==' || e.op === '!=') && (isNull(e.a) || isNull(e.b))) {
          const other = isNull(e.a) ? e.b : e.a;
          return `kd_f_bool((${gen(other)}).kind ${e.op} KD_VALUE_NONE)`;
        }
        return `kd_f_binop(c, KD_OP_${BINOPS[e.op]}, ${gen(e.a)}, ${gen(e.b)})`;
      }
      case 'cond': return `(kd_f_truthy(c, ${gen(e.c)}) ? ${gen(e.a)} : ${gen(e.b)})`;
      case 'call': {
        const callee = resolve(e.name, e.args, typeOf);
        const slots = callee.args.map(() => 'kd_value_none()');
        let p = 0;
        for (const a of e.args) {
          if (a.name) {
            const j = callee.args.findIndex((x) => x.name === a.name);
            slots[j] = gen(a.e);
          } else {
            if (p >= callee.args.length) throw new Error(`too many args for ${callee.name}`);
            slots[p++] = gen(a.e);
          }
        }
        // A factory called without device= makes its tensor where the op ran (the device of its
        // outputs and of their gradients), not on the CPU: zeros(self.shape) then scatter(grad).
        const dev = callee.args.findIndex((x) => x.name === 'device');
        const pureFactory = callee.kind === 'factory' && !callee.args.some((x) => TENSOR_TYPES.has(x.type));
        if (pureFactory && dev >= 0 && !e.args.some((a) => a.name === 'device')) slots[dev] = 'kd_f_device(c)';
        return `kd_f_call(c, KD_OP_${callee.cname}, ${callee.args.length}, (kd_value[]){${slots.join(', ') || 'kd_value_none()'}})`;
      }
      default: throw new Error(`bad node ${e.k}`);
    }
  }

  let body = '';
  let diff = 0;
  for (const [name, src] of Object.entries(o.backward)) {
    if (!argIndex.has(name)) throw new Error(`backward names unknown argument '${name}'`);
    const j = argIndex.get(name);
    if (!TENSOR_TYPES.has(o.args[j].type)) throw new Error(`backward for non-tensor argument '${name}'`);
    diff |= 1 << j;
    let code;
    try {
      code = gen(parse(src));
    } catch (err) {
      throw new Error(`op '${o.name}', backward of '${name}': ${err.message}`);
    }
    body += `  if (c->needs[${j}]) kd_f_set(c, ${j}, ${code});\n`;
  }
  // One call of a several-output op that several gradients pick from (gruCellBackward(...)[0],
  // [1], [2]) runs once: the later picks read the outputs the first one kept (kd_f_index_memo).
  const shared = [...multi].filter(([, n]) => n > 1).map(([call]) => call).sort((a, b) => b.length - a.length);
  shared.forEach((call, i) => { body = body.split(`kd_f_index(${call}, `).join(`kd_f_index_memo(&memo[${i}], ${call}, `); });
  if (shared.length) body = `  kd_f_memo memo[${shared.length}] = {{0}};\n` + body;
  let save = 0;
  for (const j of byValue) save |= 1 << j;
  const selfByValue = byValue.has(0) ? 1 : 0;
  return { body, diff, save, outs: outsUsed, selfByValue };
}

function genBackward(ops, header) {
  const resolve = resolver(ops);
  let s = header('backward_gen.c: the backward formulas of the op list, compiled');
  s += '#include "autograd/formula.h"\n\n';
  s += 'static inline int64_t kd_f_elem_index(kd_value v) { return v.kind == KD_VALUE_INT ? v.v.i : -1; }\n\n';
  const table = [];
  const done = new Map();
  for (const o of ops) {
    if (!o.backward) continue;
    if (o.args.length > 16) throw new Error(`op '${o.name}': backward supports at most 16 args`);
    const key = o.name.replace(/_$/, '');
    const fn = `kd_bw_${o.cname.replace(/_$/, '')}`;
    if (!done.has(key)) {
      const r = compileOp(o, resolve);
      s += `static kd_status ${fn}(kd_bw_ctx *c) {\n${r.body}  return c->st;\n}\n`;
      s += `static const kd_backward_spec ${fn}_spec = {${fn}, 0x${r.diff.toString(16)}u, 0x${r.save.toString(16)}u, ` +
        `0x${r.outs.toString(16)}u, ${r.selfByValue}};\n\n`;
      done.set(key, `${fn}_spec`);
    }
    table.push(`    [KD_OP_${o.cname}] = &${done.get(key)},\n`);
  }
  s += 'const kd_backward_spec *const kd_backward_table[KD_OP_COUNT] = {\n' + table.join('') + '};\n';
  return s;
}

module.exports = { genBackward, parse };
