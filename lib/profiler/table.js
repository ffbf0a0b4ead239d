// profiler/table.js - PyTorch's profiler table (torch.autograd.profiler_util._build_table):
// right-aligned columns two spaces apart, times as us/ms/s with three decimals, shares of the
// summed self times, and the "Self CPU time total" footer.
'use strict';

const { makeError } = require('../errors');

const SORT_KEYS = {
  self_cpu_time_total: 'selfCpuTimeTotal', cpu_time_total: 'cpuTimeTotal', cpu_time: 'cpuTime',
  self_cuda_time_total: 'selfCudaTimeTotal', cuda_time_total: 'cudaTimeTotal', cuda_time: 'cudaTime',
  count: 'count',
};
for (const v of Object.values(SORT_KEYS)) SORT_KEYS[v] = v;

const COLUMN_WIDTH = 12;
const MAX_NAME_WIDTH = 55;
const MAX_SHAPES_WIDTH = 80;
const MAX_SOURCE_WIDTH = 75;

function formatTime(us) {
  if (us >= 1e6) return `${(us / 1e6).toFixed(3)}s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(3)}ms`;
  return `${us.toFixed(3)}us`;
}

function formatShare(us, totalUs) {
  return totalUs === 0 ? 'NaN' : `${((us * 100) / totalUs).toFixed(2)}%`;
}

function truncate(s, width) {
  return s.length > width ? `${s.slice(0, width - 3)}...` : s;
}

function shapesText(shapes) {
  return JSON.stringify(shapes).replace(/,/g, ', ');
}

/** The table of key-average rows: opts { sortBy, rowLimit, cuda (show CUDA columns), shapes }. */
function buildTable(rows, opts) {
  const sortBy = opts.sortBy === undefined ? null : SORT_KEYS[opts.sortBy];
  if (opts.sortBy !== undefined && !sortBy)
    throw makeError('KD_INVALID_ARGUMENT', `table: unknown sortBy '${opts.sortBy}' (one of ${Object.keys(SORT_KEYS).filter((k) => k.includes('_') || k === 'count').join(', ')})`);
  const rowLimit = opts.rowLimit === undefined || opts.rowLimit < 0 ? Infinity : opts.rowLimit;
  const sorted = sortBy ? [...rows].sort((a, b) => b[sortBy] - a[sortBy]) : [...rows];
  const shown = sorted.slice(0, rowLimit);
  const withShapes = rows.some((r) => r.inputShapes);
  const withStack = rows.some((r) => r.stack);
  const cuda = !!opts.cuda;

  const nameWidth = Math.min(MAX_NAME_WIDTH, Math.max(4, ...rows.map((r) => r.key.length)) + 4);
  const shapesWidth = withShapes ? Math.min(MAX_SHAPES_WIDTH, Math.max(12, ...rows.map((r) => shapesText(r.inputShapes).length)) + 4) : 0;
  const widths = [nameWidth];
  const headers = ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg'];
  if (cuda) headers.push('Self CUDA', 'Self CUDA %', 'CUDA total', 'CUDA time avg');
  headers.push('# of Calls');
  for (let i = 1; i < headers.length; i++) widths.push(COLUMN_WIDTH);
  if (withShapes) {
    headers.push('Input Shapes');
    widths.push(shapesWidth);
  }
  if (withStack) {
    headers.push('Source Location');
    widths.push(Math.min(MAX_SOURCE_WIDTH, Math.max(15, ...rows.flatMap((r) => (r.stack || []).map((f) => f.length))) + 4));
  }
  const sourceColumn = withStack ? widths.length - 1 : -1; // left-aligned, as PyTorch's
  const line = (cells) => cells.map((c, i) => (i === sourceColumn ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ') + '  ';
  const sep = widths.map((w) => '-'.repeat(w)).join('  ') + '  ';

  const selfCpuSum = rows.reduce((s, r) => s + r.selfCpuTimeTotal, 0);
  const selfCudaSum = rows.reduce((s, r) => s + r.selfCudaTimeTotal, 0);
  const out = [sep, line(headers), sep];
  for (const r of shown) {
    const cells = [truncate(r.key, nameWidth - 3), formatShare(r.selfCpuTimeTotal, selfCpuSum), formatTime(r.selfCpuTimeTotal),
      formatShare(r.cpuTimeTotal, selfCpuSum), formatTime(r.cpuTimeTotal), formatTime(r.cpuTime)];
    if (cuda) cells.push(formatTime(r.selfCudaTimeTotal), formatShare(r.selfCudaTimeTotal, selfCudaSum), formatTime(r.cudaTimeTotal), formatTime(r.cudaTime));
    cells.push(r.count);
    if (withShapes) cells.push(truncate(shapesText(r.inputShapes), shapesWidth - 3));
    const frames = withStack ? (r.stack || []) : [];
    if (withStack) cells.push(truncate(frames[0] || '', widths[sourceColumn] - 3));
    out.push(line(cells));
    for (const f of frames.slice(1)) out.push(line(cells.map((c, i) => (i === sourceColumn ? truncate(f, widths[i] - 3) : ''))));
  }
  out.push(sep, `Self CPU time total: ${formatTime(selfCpuSum)}`);
  if (cuda) out.push(`Self CUDA time total: ${formatTime(selfCudaSum)}`);
  return out.join('\n') + '\n';
}

module.exports = { buildTable, formatTime };
