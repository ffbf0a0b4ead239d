// repeat.js - `--check-repeat`: compares the rows of two runs of the suite, back to back.
// The bar: for cases longer than 1 ms, each kindling/peer ratio repeats within 10%.
'use strict';

const PEERS = [['torch_s', 'PyTorch'], ['tfjs_s', 'tfjs'], ['native_s', 'cblas_sgemm']];
const MIN_S = 1e-3;
const TOLERANCE = 0.1;

/** [{case, size, peer, first, second, change, ok}] for every ratio both runs have. */
function compareRuns(rowsA, rowsB) {
  const out = [];
  for (const a of rowsA) {
    const b = rowsB.find((r) => r.case === a.case && r.size === a.size);
    if (!b || !a.kindling_s || !b.kindling_s) continue;
    if (Math.min(a.kindling_s, b.kindling_s) < MIN_S) continue;
    for (const [key, peer] of PEERS) {
      if (!a[key] || !b[key]) continue;
      const first = a.kindling_s / a[key];
      const second = b.kindling_s / b[key];
      const change = second / first - 1;
      out.push({ case: a.case, size: a.size, peer, first, second, change, ok: Math.abs(change) <= TOLERANCE });
    }
  }
  return out;
}

function formatRepeat(list) {
  if (!list.length) return [`check-repeat: no kindling/peer ratio of a case longer than ${MIN_S * 1e3} ms in both runs`];
  const cells = list.map((c) => [c.case, c.size, `kd/${c.peer}`, `${c.first.toFixed(3)}x`, `${c.second.toFixed(3)}x`,
    `${c.change >= 0 ? '+' : ''}${(100 * c.change).toFixed(1)}%`, c.ok ? 'yes' : 'NO']);
  const header = ['case', 'size', 'ratio', 'run 1', 'run 2', 'change', 'within 10%'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (cs) => cs.map((x, i) => (i < 3 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  const ok = list.filter((c) => c.ok).length;
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line),
    `check-repeat: ${ok} of ${list.length} ratios (cases over ${MIN_S * 1e3} ms) repeated within ${TOLERANCE * 100}%`];
}

module.exports = { compareRuns, formatRepeat };
