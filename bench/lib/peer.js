// peer.js - a peer process spoken to one JSON line at a time (bench/peers/*): the bench starts
// it once, sends a config line, reads its hello line, then asks for one measurement at a time,
// so that kindling and each peer measure the same case one right after the other (Note
// [Interleaving] in bench/run.js). Every failure resolves to {error} instead of throwing.
'use strict';
const { spawn } = require('node:child_process');
const readline = require('node:readline');

class LinePeer {
  /** @param {string} what  name for messages; cmd/args/env: the process to start */
  constructor(what, cmd, args, env) {
    this.what = what;
    this.stderr = '';
    this.waiting = [];
    this.dead = null;
    this.child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    this.child.on('error', (e) => this.fail(`${what}: ${e.code || e.message}`));
    this.child.on('exit', (code, signal) => this.fail(`${what} exited (${signal || code}): ${this.tail()}`));
    this.child.stdin.on('error', () => {}); // the exit handler reports it
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      const w = this.waiting.shift();
      if (!w) return;
      try { w(JSON.parse(line)); } catch { w({ error: `${what}: unreadable answer ${line.slice(0, 200)}` }); }
    });
  }

  tail() { return this.stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ') || 'no message'; }

  fail(msg) {
    if (!this.dead) this.dead = msg;
    for (const w of this.waiting.splice(0)) w({ error: this.dead });
  }

  /** Sends one JSON line; resolves to the answer line, or {error}. */
  request(obj) {
    if (this.dead) return Promise.resolve({ error: this.dead });
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${JSON.stringify(obj)}\n`);
    });
  }

  close() {
    if (this.dead) return;
    this.dead = `${this.what} closed`;
    this.child.stdin.end();
  }
}

module.exports = { LinePeer };
