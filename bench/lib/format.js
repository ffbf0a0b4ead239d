// format.js - how the bench prints: times, rates, ratios (marked when measured under load), the
// results table (plain or Markdown) and the headline lines. Functions return strings;
// bench/run.js prints them and bench/lib/results.js writes them into bench/RESULTS.md.
'use strict';

function fmtTime(s, unit) {
  if (s === undefined || s === null || !Number.isFinite(s)) return '-';
  if (unit === 'us') return `${(s * 1e6).toFixed(2)} us`;
  if (s < 1e-6) return `${(s * 1e9).toFixed(1)} ns`;
  if (s < 1e-3) return `${(s * 1e6).toFixed(s < 1e-5 ? 2 : 1)} us`;
  if (s < 1) return `${(s * 1e3).toFixed(s < 1e-2 ? 3 : 2)} ms`;
  return `${s.toFixed(3)} s`;
}
const fmtRatio = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : '-');
// Marks a ratio measured while the machine was loaded (row.loaded, Note [Loaded runs] in bench/lib/load.js).
const LOADED_MARK = '~';
const rowRatio = (r, a, b) => (a && b && r.loaded ? LOADED_MARK : '') + fmtRatio(a, b);
const fmtRate = (v, unit) => (v === null || v === undefined ? '-'
  : `${v >= 100 ? v.toFixed(0) : v >= 0.1 ? v.toFixed(1) : v.toPrecision(2)} ${unit}`);

/** The results table; columns for peers that have no result in any row are left out. */
function formatTable(rows, markdown) {
  const has = (k) => rows.some((r) => r[k]);
  const cols = [
    ['case', (r) => r.case],
    ['size', (r) => r.size],
    ['kindling', (r) => fmtTime(r.kindling_s, r.unit)],
    ...(has('torch_s') ? [['torch', (r) => fmtTime(r.torch_s, r.unit)], ['kd/torch', (r) => rowRatio(r, r.kindling_s, r.torch_s)]] : []),
    ...(has('tfjs_s') ? [['tfjs', (r) => fmtTime(r.tfjs_s, r.unit)], ['kd/tfjs', (r) => rowRatio(r, r.kindling_s, r.tfjs_s)]] : []),
    ...(has('native_s') ? [['native', (r) => fmtTime(r.native_s, r.unit)], ['kd/native', (r) => rowRatio(r, r.kindling_s, r.native_s)]] : []),
    ['kindling rate', (r) => fmtRate(r.kindling_rate, r.rate_unit)],
    ...(has('torch_s') ? [['torch rate', (r) => fmtRate(r.torch_rate, r.rate_unit)]] : []),
    ['% of limit', (r) => (r.limit_pct !== null ? `${r.limit_pct.toFixed(0)}% ${r.limit}` : r.limit && r.in_cache ? '(in cache)' : '-')],
  ];
  const header = cols.map((c) => c[0]);
  const body = rows.map((r) => cols.map((c) => (r.kindling_error && c[0] === 'kindling' ? 'failed' : c[1](r))));
  const out = [];
  if (markdown) {
    out.push(`| ${header.join(' | ')} |`);
    out.push(`|${header.map((h, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
    for (const b of body) out.push(`| ${b.join(' | ')} |`);
    return out.join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  out.push(line(header));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) out.push(line(b));
  return out.join('\n');
}

/** The project's targets (cases' `headline` sizes), one line each. */
function formatHeadlines(rows) {
  const out = [];
  for (const r of rows.filter((x) => x.headline && x.kindling_s)) {
    const parts = [`kindling ${fmtTime(r.kindling_s, r.unit)}`];
    if (r.kindling_rate !== null) parts[0] += ` = ${fmtRate(r.kindling_rate, r.rate_unit)}`;
    if (r.limit_pct !== null) parts.push(`${r.limit_pct.toFixed(0)}% of ${r.limit}`);
    if (r.stream_add_pct !== null && r.limit !== 'stream.add') parts.push(`${r.stream_add_pct.toFixed(0)}% of stream.add`);
    if (r.torch_s) parts.push(`PyTorch ${fmtTime(r.torch_s, r.unit)} (kindling/PyTorch ${rowRatio(r, r.kindling_s, r.torch_s)})`);
    if (r.tfjs_s) parts.push(`tfjs ${fmtTime(r.tfjs_s, r.unit)} (kindling/tfjs ${rowRatio(r, r.kindling_s, r.tfjs_s)})`);
    if (r.native_s) parts.push(`cblas_sgemm ${fmtTime(r.native_s, r.unit)} (kindling/BLAS ${rowRatio(r, r.kindling_s, r.native_s)})`);
    out.push(`  ${r.title} [${r.size}]: ${parts.join('; ')}`);
  }
  return out;
}

module.exports = { fmtTime, fmtRatio, fmtRate, formatTable, formatHeadlines, LOADED_MARK };
