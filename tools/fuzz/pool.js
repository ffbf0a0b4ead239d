// fuzz/pool.js - runs fuzz cases in a child process (tools/fuzz/child.js) so that whatever a case
// does to the process - a signal, an abort, a sanitizer report, a hang, memory running away - is
// seen from outside and becomes a finding instead of ending the fuzzer. One Runner owns one child
// at a time: it is reused from case to case and started again after a crash or a timeout. IPC
// uses the 'advanced' serialization (structured clone), so NaN, -0, Infinity, BigInt and
// undefined in a case arrive as they were generated.
'use strict';
const { fork } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { addTally } = require('./promise');

const CHILD = path.join(__dirname, 'child.js');
const STDERR_KEEP = 16000;

class Runner {
  /**
   * env: extra environment of the child (the ASan one for --asan); timeoutMs per case; logDir:
   * ASan's log_path directory, whose report of a crashed child (asan.<pid>) joins its stderr.
   */
  constructor({ env = {}, timeoutMs = 20000, logDir = null } = {}) {
    this.env = env;
    this.logDir = logDir;
    this.timeoutMs = timeoutMs;
    this.child = null;
    this.nextId = 1;
    this.pending = null;
    this.lastFinding = null;
    this.stderr = '';
    this.starts = 0;
    this.tally = { calls: 0, returned: 0, codes: {}, peaks: {} }; // of every case run, see promise.js
  }

  start() {
    this.starts++;
    // --expose-gc: a case that counts the tensors left alive (the cycles target) collects first
    const child = fork(CHILD, [], {
      env: { ...process.env, ...this.env }, serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      execArgv: [...process.execArgv, '--expose-gc'],
    });
    this.stderr = '';
    child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-STDERR_KEEP); });
    this.ready = new Promise((resolve, reject) => {
      child.once('message', (m) => (m && m.ready ? resolve() : reject(new Error('fuzz child: unexpected first message'))));
      child.once('exit', (code, signal) => reject(new Error(`fuzz child exited while starting (${signal || code}): ${this.stderr}`)));
    });
    child.on('message', (m) => {
      if (!this.pending || !m || m.id !== this.pending.id) return;
      if (m.tally) addTally(this.tally, m.tally);
      this.settle(m.finding || null);
      if (m.retire) this.close(); // the child is used up (see child.js): the next case starts a new one
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      // let the stderr pipe drain: a sanitizer's report is written just before the process ends
      if (this.pending) {
        setTimeout(() => {
          const log = this.logDir && path.join(this.logDir, `asan.${child.pid}`);
          const report = log && fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
          this.settle({ kind: 'crash', signal, code, stderr: (this.stderr + report).slice(-STDERR_KEEP) });
        }, 50);
      }
    });
    this.child = child;
    return this.ready;
  }

  settle(finding) {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    this.lastFinding = finding;
    clearTimeout(p.timer);
    p.resolve(finding);
  }

  /** Runs one case; resolves to null or a finding ({kind, ...}). */
  async run(target, input) {
    if (!this.child) await this.start();
    const id = this.nextId++;
    const child = this.child;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.kill({ kind: 'hang', message: `no answer within ${this.timeoutMs} ms` }), this.timeoutMs);
      this.pending = { id, resolve, timer, child, target, input };
      this.stderr = '';
      child.send({ id, target, input });
    });
  }

  /** Kills the child of the case running (whether or not it is still this.child) and settles the case with `finding`. */
  kill(finding) {
    const p = this.pending;
    if (!p) return;
    if (this.child === p.child) this.child = null;
    p.child.kill('SIGKILL');
    this.settle({ ...finding, stderr: this.stderr });
  }

  /**
   * Ends the runner: a case still running (the run's time is up while it computes) is killed with
   * its child and reported as a hang; returns that finding, with the case ({target, input}), or
   * null. An idle child is let go (disconnected) and killed if it has not exited 2 s later.
   */
  close() {
    let cut = null;
    if (this.pending) {
      const { target, input } = this.pending;
      this.kill({ kind: 'hang', message: 'still running when the run ended: killed' });
      cut = { target, input, finding: this.lastFinding };
    }
    const child = this.child;
    this.child = null;
    if (child) {
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      child.once('exit', () => clearTimeout(timer));
      if (child.connected) child.disconnect();
    }
    return cut;
  }
}

module.exports = { Runner };
