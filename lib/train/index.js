// train/index.js - kd.train: small helpers for training loops, used by the examples.
//   ProgressBar, progress(iterable)        a progress bar with rate, ETA and metrics (progress.js)
//   lineChartSvg, curvesSvg, writeCurves   SVG line charts of loss/accuracy per epoch (chart.js)
//   table(records)                         per-epoch records as a plain-text table (the summary)
//   formatDuration(seconds)                '1:02:03'
// Plain JavaScript over the public API: nothing here touches native code.
'use strict';

const { ProgressBar, progress, formatDuration, formatMetric } = require('./progress');
const { lineChartSvg, curvesSvg, writeCurves } = require('./chart');

/**
 * Records ([{ epoch: 1, trainLoss: 0.5, testAcc: 0.86, time: 12.3 }, ...]) as a text table with a
 * header row; columns are the union of the records' keys in first-seen order (or options.keys).
 */
function table(records, options = {}) {
  if (!Array.isArray(records)) throw new TypeError('table: records must be an array of objects');
  const keys = options.keys || [...new Set(records.flatMap((r) => Object.keys(r)))];
  const cell = (v) => (v === undefined || v === null ? '' : typeof v === 'number' ? formatMetric(v) : String(v));
  const rows = [keys, ...records.map((r) => keys.map((k) => cell(r[k])))];
  const widths = keys.map((_, j) => Math.max(...rows.map((row) => row[j].length)));
  return rows.map((row) => row.map((c, j) => c.padStart(widths[j])).join('  ')).join('\n');
}

module.exports = Object.freeze({
  ProgressBar, progress, lineChartSvg, curvesSvg, writeCurves, table, formatDuration,
});
