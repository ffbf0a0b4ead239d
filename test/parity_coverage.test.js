// parity_coverage.test.js - the parity suite covers every public op (issue 4): each op of the op
// list (src/ops/oplist; factories and kd._internal ops excepted) has at least 4 PyTorch fixture
// cases (test/fixtures/*.json), one with a non-contiguous input (a tensor spec with `views`) and,
// when it takes several tensors, one broadcast case (tensor args of different shapes). Cases are
// matched to ops by their `op` path with a namespace ('nn.functional.', 'special.') stripped, an
// alias (src/ops/aliases.js) counting for its op; an overload ('max.dim',
// 'clamp.Tensor', 'conv2d.padding') is matched by its own cases only.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, isTensorSpec } = require('./helpers');
const ops = require('../src/ops/oplist');

const MIN_CASES = 4;

function fixtureCases() {
  const dir = path.join(__dirname, 'fixtures');
  const out = [];
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    if (Array.isArray(j.cases)) for (const c of j.cases) if (c && typeof c.op === 'string') out.push(c);
  }
  return out;
}

// The tensor specs a case passes: positional args, lists of tensors, and keyword args.
function specsOf(c) {
  const vals = [...c.args, ...Object.values(c.kwargs || {})];
  return vals.flatMap((a) => (Array.isArray(a) ? a.filter(isTensorSpec) : isTensorSpec(a) ? [a] : []));
}

// Number of single-tensor arguments in a schema (Tensor, Tensor?, Tensor|Scalar; not lists).
function tensorArgCount(schema) {
  return schema.split(',').map((s) => s.trim().split(/\s+/)[0])
    .filter((t) => t === 'Tensor' || t === 'Tensor?' || t === 'Tensor|Scalar').length;
}

function isPublic(o) {
  if (o.kind === 'factory') return false;
  const ns = o.ns || [''];
  return !(ns.length === 1 && ns[0] === '_internal');
}

// The op a case's path calls: an alias (src/ops/aliases.js) is its op; a namespace prefix of an
// op ('nn.functional.', 'special.', '_internal.') is dropped.
const aliases = require('../src/ops/aliases');
const namespaces = [...new Set(ops.flatMap((o) => o.ns || []).filter(Boolean))];
function opOfPath(p) {
  if (aliases[p]) return aliases[p];
  const ns = namespaces.find((n) => p.startsWith(n + '.'));
  return ns ? p.slice(ns.length + 1) : p;
}
// The case path of an op: its name, or for an op renamed by `jsname` (kd.linalg.inv is op
// 'linalgInv') the path of its function ('linalg.inv', overload suffix kept: 'linalg.norm.ordStr').
const pathOf = (o) => (o.jsname ? `${(o.ns || [''])[0]}.${o.jsname}${o.name.includes('.') ? o.name.slice(o.name.indexOf('.')) : ''}` : o.name);

const jsnamePaths = new Set(ops.filter((o) => o.jsname).map(pathOf));

function coverageGaps() {
  const byOp = new Map();
  for (const c of fixtureCases()) {
    // a jsname op's path ('linalg.inv') is its key as it is; others go through opOfPath
    const key = jsnamePaths.has(c.op) ? c.op : opOfPath(c.op);
    if (!byOp.has(key)) byOp.set(key, []);
    byOp.get(key).push(c);
  }
  const gaps = [];
  for (const o of ops.filter(isPublic)) {
    const list = byOp.get(pathOf(o)) || [];
    const problems = [];
    if (list.length < MIN_CASES) problems.push(`${list.length} cases (< ${MIN_CASES})`);
    if (!list.some((c) => specsOf(c).some((s) => Array.isArray(s.views) && s.views.length))) problems.push('no non-contiguous input');
    if (tensorArgCount(o.args) >= 2 && !list.some((c) => new Set(specsOf(c).map((s) => JSON.stringify(s.shape))).size > 1)) {
      problems.push('no broadcast case');
    }
    if (problems.length) gaps.push(`${o.name} (${o.family}): ${problems.join(', ')}`);
  }
  return gaps;
}

describe('parity suite coverage (issue 4)', function () {
  it(`every public op has >= ${MIN_CASES} fixture cases, a non-contiguous input and a broadcast case`, function () {
    const gaps = coverageGaps();
    assert.equal(gaps.length, 0, `${gaps.length} ops lack parity coverage:\n  ${gaps.join('\n  ')}`);
  });

  it('every fixture case names an op of the op list, or a function lib/ writes in JavaScript', function () {
    const names = new Set([...ops.map((o) => o.name), ...ops.map(pathOf)]);
    // kd.nn.functional's compositions (lib/nn/functional_*.js, ...) are JS functions, not op-list entries
    const jsFunction = (p) => typeof p.split('.').reduce((o, k) => (o == null ? undefined : o[k]), kd) === 'function';
    const unknown = new Set(fixtureCases().map((c) => c.op)
      .filter((p) => !names.has(opOfPath(p)) && !names.has(p.replace(/^(nn\.functional|_internal)\./, '')) && !jsFunction(p)));
    assert.equal(unknown.size, 0, `fixture ops not in the op list: ${[...unknown].join(', ')}`);
  });
});

module.exports = { coverageGaps };
