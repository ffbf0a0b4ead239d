// chart.js - kd.train.lineChartSvg / curvesSvg / writeCurves: small SVG line charts (no
// dependencies) for training curves: loss and accuracy per epoch.
//
//   const history = [{ epoch: 1, trainLoss: 0.52, testLoss: 0.44, testAcc: 0.84 }, ...];
//   kd.train.writeCurves('out/curves.svg', history, { title: 'Fashion-MNIST MLP' });
//
// lineChartSvg draws one panel: series of y values (x = 1, 2, ... or given points), axes with
// "nice" ticks, a legend. curvesSvg lays out one panel for the keys whose name contains 'loss'
// and one for those containing 'acc' (any other numeric keys go to a third panel), side by side.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { checkPath, withFsErrors, makeDirs } = require('../files');

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmt = (v) => (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(1) : String(+v.toPrecision(6)));
const num = (v) => Math.round(v * 100) / 100;

/** About `count` round tick values covering [lo, hi]. */
function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) { const d = Math.abs(lo) * 0.1 || 1; lo -= d; hi += d; }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const ticks = [];
  for (let v = start; v <= end + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  return ticks;
}

// series: { name: number[] } or [{ name, values } | { name, points: [[x, y], ...] }]
function normaliseSeries(series) {
  const list = Array.isArray(series) ? series : Object.entries(series || {}).map(([name, values]) => ({ name, values }));
  return list.map((s, i) => {
    const pts = s.points ? s.points.map(([x, y]) => [Number(x), Number(y)])
      : (s.values || []).map((y, j) => [j + 1, y === null || y === undefined ? NaN : Number(y)]);
    return { name: String(s.name === undefined ? `series ${i + 1}` : s.name), color: s.color || COLORS[i % COLORS.length], points: pts.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)) };
  });
}

/**
 * One line chart as an SVG fragment (a <g>) at (x, y); lineChartSvg wraps it in a document.
 * options: title, xLabel ('epoch'), yLabel, width (480), height (320), yMin/yMax (fixed range).
 */
function chartGroup(series, options = {}, x0 = 0, y0 = 0) {
  const { title = '', xLabel = 'epoch', yLabel = '', width = 480, height = 320 } = options;
  const list = normaliseSeries(series);
  const m = { l: 62, r: 16, t: title ? 34 : 14, b: 46 };
  const pw = width - m.l - m.r;
  const ph = height - m.t - m.b;
  const all = list.flatMap((s) => s.points);
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  let xlo = xs.length ? Math.min(...xs) : 0;
  let xhi = xs.length ? Math.max(...xs) : 1;
  if (xhi === xlo) { xlo -= 1; xhi += 1; }
  let ylo = options.yMin !== undefined ? options.yMin : ys.length ? Math.min(...ys) : 0;
  let yhi = options.yMax !== undefined ? options.yMax : ys.length ? Math.max(...ys) : 1;
  const yt = niceTicks(ylo, yhi);
  if (options.yMin === undefined) ylo = yt[0];
  if (options.yMax === undefined) yhi = yt[yt.length - 1];
  if (yhi === ylo) yhi = ylo + 1;
  const integerX = xs.every(Number.isInteger);
  let xt = niceTicks(xlo, xhi, Math.min(8, Math.max(2, Math.round(xhi - xlo))));
  if (integerX) xt = xt.filter(Number.isInteger);
  xt = xt.filter((v) => v >= xlo - 1e-9 && v <= xhi + 1e-9);
  const sx = (v) => m.l + ((v - xlo) / (xhi - xlo)) * pw;
  const sy = (v) => m.t + ph - ((v - ylo) / (yhi - ylo)) * ph;
  const out = [`<g transform="translate(${x0},${y0})" font-family="sans-serif" font-size="12">`];
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  if (title) out.push(`<text x="${num(m.l + pw / 2)}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (const v of yt) {
    if (v < ylo - 1e-12 || v > yhi + 1e-12) continue;
    out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${num(sy(v))}" y2="${num(sy(v))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${m.l - 6}" y="${num(sy(v) + 4)}" text-anchor="end">${esc(fmt(v))}</text>`);
  }
  for (const v of xt) {
    out.push(`<line x1="${num(sx(v))}" x2="${num(sx(v))}" y1="${m.t + ph}" y2="${m.t + ph + 4}" stroke="#333"/>`);
    out.push(`<text x="${num(sx(v))}" y="${m.t + ph + 17}" text-anchor="middle">${esc(fmt(v))}</text>`);
  }
  out.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  if (xLabel) out.push(`<text x="${num(m.l + pw / 2)}" y="${height - 8}" text-anchor="middle">${esc(xLabel)}</text>`);
  if (yLabel) out.push(`<text transform="translate(14,${num(m.t + ph / 2)}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  for (const s of list) {
    if (s.points.length === 0) continue;
    const d = s.points.map(([x, y], i) => `${i ? 'L' : 'M'}${num(sx(x))},${num(sy(y))}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${esc(s.color)}" stroke-width="2"/>`);
    for (const [x, y] of s.points) out.push(`<circle cx="${num(sx(x))}" cy="${num(sy(y))}" r="2.5" fill="${esc(s.color)}"><title>${esc(`${s.name}: ${fmt(y)} at ${fmt(x)}`)}</title></circle>`);
  }
  // Legend inside the plot on the right: at the top unless the curves end in the upper half.
  const ends = list.filter((s) => s.points.length).map((s) => (s.points[s.points.length - 1][1] - ylo) / (yhi - ylo));
  const atBottom = ends.length > 0 && ends.reduce((a, b) => a + b, 0) / ends.length > 0.5;
  list.forEach((s, i) => {
    const ly = atBottom ? m.t + ph - 8 - (list.length - 1 - i) * 16 : m.t + 14 + i * 16;
    const lx = m.l + pw - 120;
    out.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${esc(s.color)}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 24}" y="${ly}">${esc(s.name)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}

const doc = (width, height, body) => `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">\n${body}\n</svg>\n`;

/** One line chart as an SVG document (a string). series: { name: number[] } or [{ name, values | points, color }]. */
function lineChartSvg(series, options = {}) {
  const { width = 480, height = 320 } = options;
  return doc(width, height, chartGroup(series, { ...options, width, height }));
}

/**
 * Loss and accuracy curves from per-epoch records ([{ epoch, trainLoss, testAcc, ... }]) as one
 * SVG document: a panel for the keys containing 'loss', one for those containing 'acc', one for
 * any other numeric keys (not 'epoch', 'time*', 'lr' unless options.keys lists them). x is
 * record.epoch when present. options: title, keys (the keys to plot), width/height per panel.
 */
function curvesSvg(records, options = {}) {
  if (!Array.isArray(records)) throw new TypeError('curvesSvg: records must be an array of objects');
  const { title = '', width = 480, height = 320 } = options;
  const keys = options.keys || [...new Set(records.flatMap((r) => Object.keys(r)))]
    .filter((k) => k !== 'epoch' && !/^time|seconds|^lr$/i.test(k) && records.some((r) => typeof r[k] === 'number'));
  const groups = [
    ['loss', keys.filter((k) => /loss/i.test(k))],
    ['accuracy', keys.filter((k) => /acc/i.test(k) && !/loss/i.test(k))],
  ];
  const rest = keys.filter((k) => !/loss|acc/i.test(k));
  if (rest.length) groups.push(['value', rest]);
  const panels = groups.filter(([, ks]) => ks.length);
  if (panels.length === 0) panels.push(['value', []]);
  const bodies = panels.map(([name, ks], i) => {
    const series = ks.map((k) => ({ name: k, points: records.map((r, j) => [r.epoch !== undefined ? r.epoch : j + 1, r[k]]).filter(([, y]) => typeof y === 'number') }));
    const t = title ? `${title}: ${name}` : name;
    return chartGroup(series, { title: t, yLabel: name, width, height }, i * width, 0);
  });
  return doc(width * panels.length, height, bodies.join('\n'));
}

/** Writes curvesSvg(records, options) to file (creating its folder); returns the path. A file
 * that cannot be written is KD_IO_ERROR. */
function writeCurves(file, records, options = {}) {
  checkPath(file, 'writeCurves()');
  const svg = curvesSvg(records, options);
  withFsErrors('writeCurves()', () => {
    makeDirs(path.dirname(path.resolve(file)));
    fs.writeFileSync(file, svg);
  });
  return file;
}

module.exports = { lineChartSvg, curvesSvg, writeCurves, niceTicks };
