// progress.js - a minimal progress bar for the char-transformer example: one line redrawn in
// place on a TTY (bar, step/total, rate, ETA and a caller-supplied status such as the loss), or a
// plain line every `every` steps when stdout is not a terminal (logs, CI, tests).
'use strict';

function fmtTime(s) {
  if (!Number.isFinite(s)) return '--:--';
  s = Math.max(0, Math.round(s));
  const m = Math.floor(s / 60);
  return `${String(m).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

class ProgressBar {
  constructor(total, { width = 28, stream = process.stdout, every = null, label = '' } = {}) {
    this.total = total;
    this.width = width;
    this.stream = stream;
    this.tty = Boolean(stream.isTTY);
    this.every = every || Math.max(1, Math.ceil(total / 20));
    this.label = label;
    this.start = performance.now();
    this.n = 0;
  }

  /** Marks `n` steps done (absolute count) and redraws with `status`. */
  update(n, status = '') {
    this.n = n;
    const elapsed = (performance.now() - this.start) / 1000;
    const rate = n / Math.max(elapsed, 1e-9);
    const eta = (this.total - n) / rate;
    const frac = Math.min(1, n / this.total);
    const fill = Math.round(frac * this.width);
    const bar = '#'.repeat(fill) + '-'.repeat(this.width - fill);
    const line = `${this.label}[${bar}] ${String(n).padStart(String(this.total).length)}/${this.total} ` +
      `${rate.toFixed(2)} it/s elapsed ${fmtTime(elapsed)} eta ${fmtTime(eta)} ${status}`;
    if (this.tty) this.stream.write(`\r${line}\x1b[K`);
    else if (n % this.every === 0 || n === this.total) this.stream.write(`${line}\n`);
  }

  /** Prints a message on its own line without breaking the bar. */
  log(msg) {
    if (this.tty) this.stream.write(`\r\x1b[K${msg}\n`);
    else this.stream.write(`${msg}\n`);
  }

  done() { if (this.tty) this.stream.write('\n'); }
}

module.exports = { ProgressBar, fmtTime };
