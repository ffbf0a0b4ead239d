// chart.js - an SVG chart of the bench's main ratios, written by hand (no dependency): one
// line per (case, size) with a bar per peer for kindling time / peer time on a log scale
// centred on 1x (left of the line: kindling is faster), and the % of the hardware limit as
// text where one applies. Headline sizes are in bold. bench/run.js writes it next to the JSON.
'use strict';

const PEERS = [
  { key: 'torch_s', label: 'PyTorch', color: '#ee6a24' },
  { key: 'tfjs_s', label: 'TensorFlow.js (CPU)', color: '#2a9d3f' },
  { key: 'native_s', label: 'cblas_sgemm', color: '#3465a4' },
];
const MIN = 1 / 16; // the axis: 1/16x .. 16x, clamped beyond
const MAX = 16;

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmtRatio = (r) => (r >= 10 || r < 0.1 ? r.toPrecision(2) : r.toFixed(2)).replace(/\.?0+$/, '') + 'x';

/**
 * @param {object[]} rows  bench rows (case, size, kindling_s, torch_s, tfjs_s, native_s, limit_pct, limit, headline)
 * @param {{title: string, subtitle?: string}} meta
 * @returns {string} the SVG document
 */
function renderChart(rows, meta) {
  const lines = rows.filter((r) => r.kindling_s && PEERS.some((p) => r[p.key]));
  const peers = PEERS.filter((p) => lines.some((r) => r[p.key]));
  const labelW = 250;
  const plotW = 520;
  const rightW = 175;
  const pctX = labelW + plotW + 45; // the % of limit column, clear of a clamped bar's label
  const barH = 9;
  const lineH = Math.max(1, peers.length) * (barH + 2) + 8;
  const top = 78;
  const width = labelW + plotW + rightW;
  const height = top + Math.max(1, lines.length) * lineH + 40;
  const x = (ratio) => {
    const r = Math.min(MAX, Math.max(MIN, ratio));
    return labelW + ((Math.log2(r) - Math.log2(MIN)) / (Math.log2(MAX) - Math.log2(MIN))) * plotW;
  };
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="10" y="20" font-size="15" font-weight="bold">${esc(meta.title)}</text>`);
  if (meta.subtitle) out.push(`<text x="10" y="37" fill="#555">${esc(meta.subtitle)}</text>`);
  // legend
  let lx = 10;
  for (const p of peers) {
    out.push(`<rect x="${lx}" y="46" width="12" height="10" fill="${p.color}"/>`);
    out.push(`<text x="${lx + 16}" y="55">kindling / ${esc(p.label)}</text>`);
    lx += 30 + 7 * (`kindling / ${p.label}`).length;
  }
  out.push(`<text x="${pctX}" y="55" fill="#555">% of limit</text>`);
  // axis: grid lines at powers of 2
  const bottom = height - 30;
  for (let e = Math.log2(MIN); e <= Math.log2(MAX); e++) {
    const gx = x(2 ** e).toFixed(1);
    out.push(`<line x1="${gx}" y1="${top - 8}" x2="${gx}" y2="${bottom}" stroke="${e === 0 ? '#000' : '#ddd'}" stroke-width="${e === 0 ? 1.2 : 1}"/>`);
    out.push(`<text x="${gx}" y="${bottom + 14}" text-anchor="middle" fill="#555">${e < 0 ? `1/${2 ** -e}` : 2 ** e}x</text>`);
  }
  out.push(`<text x="${x(MIN) + 2}" y="${top - 12}" fill="#555">kindling faster</text>`);
  out.push(`<text x="${x(MAX) - 2}" y="${top - 12}" fill="#555" text-anchor="end">kindling slower</text>`);
  lines.forEach((r, i) => {
    const y0 = top + i * lineH;
    if (i % 2) out.push(`<rect x="0" y="${y0 - 2}" width="${width}" height="${lineH}" fill="#000" fill-opacity="0.03"/>`);
    const ty = y0 + (lineH - 8) / 2 + 4;
    out.push(`<text x="${labelW - 8}" y="${ty}" text-anchor="end"${r.headline ? ' font-weight="bold"' : ''}>${esc(`${r.case} ${r.size}`)}</text>`);
    peers.forEach((p, j) => {
      const by = y0 + j * (barH + 2);
      if (!r[p.key]) return;
      const ratio = r.kindling_s / r[p.key];
      const a = x(1);
      const b = x(ratio);
      const clamped = ratio > MAX || ratio < MIN;
      out.push(`<rect x="${Math.min(a, b).toFixed(1)}" y="${by}" width="${Math.max(1, Math.abs(b - a)).toFixed(1)}" height="${barH}" fill="${p.color}"${clamped ? ' fill-opacity="0.6"' : ''}><title>${esc(`${r.case} ${r.size}: kindling / ${p.label} = ${fmtRatio(ratio)}`)}</title></rect>`);
      // the value right of the bar when kindling is slower, right of the 1x line when faster
      const tx = ratio >= 1 ? b + 3 : a + 3;
      out.push(`<text x="${tx.toFixed(1)}" y="${by + barH - 1}" font-size="9">${fmtRatio(ratio)}</text>`);
    });
    if (r.limit_pct !== null && r.limit_pct !== undefined) {
      out.push(`<text x="${pctX}" y="${ty}">${r.limit_pct.toFixed(0)}% ${esc(r.limit || '')}</text>`);
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { renderChart };
