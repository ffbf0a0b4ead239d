// progress.js - kd.train.ProgressBar and kd.train.progress(): a progress bar for long loops.
//
//   const bar = new kd.train.ProgressBar({ total: loader.length, label: 'epoch 1/5' });
//   for (...) { ...; bar.tick({ loss: loss.item() }); }
//   bar.finish();                                  // the last line, with the mean rate
//
//   for await (const batch of kd.train.progress(loader, { label: 'train' })) { ... }
//
// Shows count/total, percent, rate (items per second), ETA and the latest metrics. On a TTY it
// redraws one line with '\r' (at most every `intervalMs`); otherwise (a log file, CI) it prints
// one line each time another `everyPercent` % is done, so logs stay short. Writes to stderr by
// default, so stdout keeps only the results. No dependencies, no timers: it only draws on tick().
'use strict';

/** '1:02:03', '2:03' or '0:05' for a number of seconds; '?' when unknown. */
function formatDuration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
}

/** A metric value as it prints: integers as they are, others with 4 significant digits. */
function formatMetric(v) {
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(3);
  return v.toPrecision(4);
}

function formatRate(rate, unit) {
  if (!Number.isFinite(rate)) return `? ${unit}/s`;
  if (rate >= 100) return `${rate.toFixed(0)} ${unit}/s`;
  if (rate >= 1) return `${rate.toFixed(1)} ${unit}/s`;
  if (rate > 0) return `${(1 / rate).toFixed(2)} s/${unit}`;
  return `0 ${unit}/s`;
}

class ProgressBar {
  /**
   * options: total (items expected; omit for an open-ended loop), label (printed first),
   * unit ('it'), width (bar characters, 24), stream (process.stderr), tty (default: stream.isTTY),
   * everyPercent (non-TTY: a line per this many %, 10), intervalMs (TTY redraw interval, 100),
   * scale (items per tick when ticking by batches but counting samples, 1), enabled (true).
   */
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('ProgressBar: options must be an object');
    const {
      total = null, label = '', unit = 'it', width = 24, stream = process.stderr, tty, everyPercent = 10,
      intervalMs = 100, enabled = true,
    } = options;
    if (total !== null && !(Number.isFinite(total) && total >= 0)) throw new TypeError(`ProgressBar: total must be a non-negative number, got ${String(total)}`);
    if (!(everyPercent > 0 && everyPercent <= 100)) throw new TypeError('ProgressBar: everyPercent must be in (0, 100]');
    this.total = total;
    this.label = String(label);
    this.unit = unit;
    this.width = width;
    this.stream = stream;
    this.tty = tty === undefined ? !!(stream && stream.isTTY) : !!tty;
    this.everyPercent = everyPercent;
    this.intervalMs = intervalMs;
    this.enabled = enabled && !!stream;
    this.count = 0;
    this.metrics = {};
    this.start = performance.now();
    this._lastDraw = -Infinity;
    this._nextPercent = everyPercent;
    this._lastLen = 0;
    this.finished = false;
  }

  /** Seconds since the bar was made. */
  get elapsed() { return (performance.now() - this.start) / 1000; }
  /** Items per second so far. */
  get rate() { const e = this.elapsed; return e > 0 ? this.count / e : NaN; }
  /** Seconds left at the current rate (NaN without a total). */
  get eta() {
    if (this.total === null) return NaN;
    const r = this.rate;
    return r > 0 ? Math.max(0, this.total - this.count) / r : NaN;
  }

  /** Sets metrics shown after the rate ({ loss: 0.31, acc: 0.9 }); merged with the earlier ones. */
  set(metrics) {
    if (metrics) Object.assign(this.metrics, metrics);
    return this;
  }

  /** Advances by n items (default 1) and optionally updates metrics; redraws when due. */
  tick(n = 1, metrics) {
    if (typeof n === 'object' && n !== null) { metrics = n; n = 1; }
    this.count += n;
    this.set(metrics);
    if (!this.enabled || this.finished) return this;
    if (this.tty) {
      const now = performance.now();
      if (now - this._lastDraw >= this.intervalMs || (this.total !== null && this.count >= this.total)) {
        this._lastDraw = now;
        this._draw(false);
      }
    } else if (this.total) {
      const pct = (100 * this.count) / this.total;
      if (pct >= this._nextPercent && pct < 100) {
        while (this._nextPercent <= pct) this._nextPercent += this.everyPercent;
        this._draw(false);
      }
    }
    return this;
  }

  /** The status line as text (what is drawn). */
  line(final = false) {
    const parts = [];
    if (this.label) parts.push(this.label);
    if (this.total !== null && this.total > 0) {
      const frac = Math.min(1, this.count / this.total);
      const full = Math.round(frac * this.width);
      const bar = '='.repeat(Math.max(0, full - (frac < 1 ? 1 : 0))) + (frac < 1 && full > 0 ? '>' : '');
      parts.push(`[${bar.padEnd(this.width)}]`);
      parts.push(`${this.count}/${this.total}`);
      parts.push(`${String(Math.floor(frac * 100)).padStart(3)}%`);
    } else {
      parts.push(`${this.count} ${this.unit}`);
    }
    parts.push(formatRate(this.rate, this.unit));
    parts.push(final ? `in ${formatDuration(this.elapsed)}` : `ETA ${formatDuration(this.eta)}`);
    for (const [k, v] of Object.entries(this.metrics)) parts.push(`${k} ${formatMetric(v)}`);
    return parts.join(' ');
  }

  _draw(final) {
    const text = this.line(final);
    if (this.tty) {
      const pad = this._lastLen > text.length ? ' '.repeat(this._lastLen - text.length) : '';
      this.stream.write(`\r${text}${pad}${final ? '\n' : ''}`);
      this._lastLen = final ? 0 : text.length;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** Draws the final line (elapsed time instead of ETA) and returns it; later ticks draw nothing. */
  finish(metrics) {
    this.set(metrics);
    const text = this.line(true);
    if (this.enabled && !this.finished) this._draw(true);
    this.finished = true;
    return text;
  }
}

/**
 * Wraps an iterable or async iterable (a DataLoader, an array, a generator) so that each item
 * ticks a ProgressBar; total defaults to its length. The bar is finished when the loop ends (also
 * on break). `options.bar` receives the bar (to set metrics): progress(loader, {onBar: (b) => ...})
 * or keep the returned wrapper's `.bar`.
 */
function progress(iterable, options = {}) {
  if (iterable === null || iterable === undefined) throw new TypeError('progress: expected an iterable');
  const total = options.total !== undefined ? options.total
    : typeof iterable.length === 'number' ? iterable.length
      : typeof iterable.size === 'number' ? iterable.size : null;
  const bar = new ProgressBar({ ...options, total });
  const wrapper = { bar };
  if (typeof iterable[Symbol.asyncIterator] === 'function') {
    wrapper[Symbol.asyncIterator] = async function* wrap() {
      try {
        for await (const x of iterable) { yield x; bar.tick(); }
      } finally { bar.finish(); }
    };
  }
  if (typeof iterable[Symbol.iterator] === 'function') {
    wrapper[Symbol.iterator] = function* wrap() {
      try {
        for (const x of iterable) { yield x; bar.tick(); }
      } finally { bar.finish(); }
    };
  }
  if (!wrapper[Symbol.iterator] && !wrapper[Symbol.asyncIterator]) throw new TypeError('progress: expected an iterable');
  return wrapper;
}

module.exports = { ProgressBar, progress, formatDuration, formatMetric };
