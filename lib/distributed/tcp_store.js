// tcp_store.js - kd.distributed.TCPStore and PrefixStore: the key-value rendezvous store of
// PyTorch's c10d (set/get/add/wait/check/deleteKey/numKeys, with timeouts), in Node.
// One process (isMaster) listens on host:port and holds the keys; every store, the master's
// included, is a client over TCP. The wire protocol is kindling's own: one JSON object per line,
// {id, op, key(s), value (base64), amount}, answered by {id, value|ok|error}. A `get` or `wait`
// for a key not yet set is parked on the server and answered when the key appears; the client
// enforces the timeout, so a missing key becomes a KD_TIMEOUT error, never a hang.
'use strict';
const net = require('net');
const { KindlingError, typeError } = require('../errors');

function storeError(message, code = 'KD_DISTRIBUTED') { return new KindlingError(message, code); }
const toBuf = (v) => (Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v) :
  v instanceof Uint8Array ? Buffer.from(v) : (() => { throw typeError(`store value must be a string, Buffer or Uint8Array, got ${typeof v}`); })());
const checkKey = (k) => { if (typeof k !== 'string') throw typeError(`store key must be a string, got ${typeof k}`); return k; };

/** The server half: the keys, and the requests waiting for keys not yet set. */
class StoreServer {
  constructor() { this.data = new Map(); this.waiters = []; this.sockets = new Set(); }
  listen(host, port) {
    this.server = net.createServer((sock) => this._serve(sock));
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => { this.server.removeListener('error', reject); resolve(this.server.address().port); });
    });
  }
  _serve(sock) {
    this.sockets.add(sock);
    sock.setNoDelay(true);
    let buf = '';
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
        let req;
        try { req = JSON.parse(line); } catch { sock.destroy(); return; }
        this._handle(sock, req);
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => { this.sockets.delete(sock); this.waiters = this.waiters.filter((w) => w.sock !== sock); });
  }
  _reply(sock, msg) { if (!sock.destroyed) sock.write(JSON.stringify(msg) + '\n'); }
  _wake() {
    this.waiters = this.waiters.filter((w) => {
      if (!w.keys.every((k) => this.data.has(k))) return true;
      this._reply(w.sock, w.op === 'get' ? { id: w.id, value: this.data.get(w.keys[0]) } : { id: w.id, ok: true });
      return false;
    });
  }
  _handle(sock, req) {
    const { id, op } = req;
    switch (op) {
      case 'set': this.data.set(req.key, req.value); this._reply(sock, { id, ok: true }); this._wake(); return;
      case 'compareSet': {
        const cur = this.data.get(req.key);
        if (cur === undefined ? req.expected === '' : cur === req.expected) this.data.set(req.key, req.value);
        this._reply(sock, { id, value: this.data.has(req.key) ? this.data.get(req.key) : req.expected });
        this._wake(); return;
      }
      case 'get': case 'wait':
        if (req.keys.every((k) => this.data.has(k))) {
          this._reply(sock, op === 'get' ? { id, value: this.data.get(req.keys[0]) } : { id, ok: true });
        } else this.waiters.push({ sock, id, op, keys: req.keys });
        return;
      case 'cancel': this.waiters = this.waiters.filter((w) => !(w.sock === sock && w.id === req.target)); return;
      case 'add': {
        const cur = this.data.has(req.key) ? Number(Buffer.from(this.data.get(req.key), 'base64').toString()) : 0;
        if (!Number.isInteger(cur)) { this._reply(sock, { id, error: `key '${req.key}' does not hold an integer` }); return; }
        const next = cur + req.amount;
        this.data.set(req.key, Buffer.from(String(next)).toString('base64'));
        this._reply(sock, { id, value: next }); this._wake(); return;
      }
      case 'check': this._reply(sock, { id, value: req.keys.every((k) => this.data.has(k)) }); return;
      case 'deleteKey': this._reply(sock, { id, value: this.data.delete(req.key) }); return;
      case 'numKeys': this._reply(sock, { id, value: this.data.size }); return;
      default: this._reply(sock, { id, error: `unknown store request '${op}'` });
    }
  }
  close() {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * new TCPStore(hostName, port, worldSize?, isMaster = false, { timeout = 300000 ms, waitForWorkers })
 * Await `store.ready` (or any method, which waits for it) before use. port 0 on the master picks
 * a free port: read it from `store.port` after `ready`.
 */
class TCPStore {
  constructor(hostName, port, worldSize = null, isMaster = false, options = {}) {
    if (typeof hostName !== 'string') throw typeError(`TCPStore: hostName must be a string, got ${typeof hostName}`);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw typeError(`TCPStore: port must be an integer in [0, 65535], got ${port}`);
    this.host = hostName; this.port = port; this.worldSize = worldSize; this.isMaster = !!isMaster;
    this.timeout = options.timeout ?? 300000;
    this._next = 1; this._pending = new Map(); this._buf = '';
    this.ready = this._start();
    this.ready.catch(() => {});
  }
  async _start() {
    if (this.isMaster) { this._server = new StoreServer(); this.port = await this._server.listen(this.host, this.port); }
    const deadline = Date.now() + this.timeout;
    for (;;) {
      try { this._sock = await this._connect(); break; } catch (e) {
        if (Date.now() >= deadline) throw storeError(`TCPStore: could not connect to ${this.host}:${this.port} within ${this.timeout} ms (${e.code || e.message})`, 'KD_TIMEOUT');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return this;
  }
  _connect() {
    return new Promise((resolve, reject) => {
      const sock = net.connect(this.port, this.host);
      sock.once('error', reject);
      sock.once('connect', () => {
        sock.removeListener('error', reject);
        sock.setNoDelay(true);
        sock.on('data', (c) => this._onData(c));
        sock.on('error', () => {});
        sock.on('close', () => this._failAll(storeError(`TCPStore: connection to ${this.host}:${this.port} closed`, 'KD_CONNECTION_CLOSED')));
        sock.unref();
        resolve(sock);
      });
    });
  }
  _onData(chunk) {
    this._buf += chunk.toString('utf8');
    let nl;
    while ((nl = this._buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(this._buf.slice(0, nl)); this._buf = this._buf.slice(nl + 1);
      const p = this._pending.get(msg.id);
      if (!p) continue;
      this._pending.delete(msg.id); clearTimeout(p.timer); this._refresh();
      if (msg.error) p.reject(storeError(`TCPStore: ${msg.error}`)); else p.resolve(msg);
    }
  }
  _failAll(err) { for (const p of this._pending.values()) { clearTimeout(p.timer); p.reject(err); } this._pending.clear(); this._closed = true; }
  // A socket with requests in flight keeps the process alive; an idle one does not.
  _refresh() { if (this._sock) { if (this._pending.size) this._sock.ref(); else this._sock.unref(); } }
  async _request(req, timeout = null) {
    await this.ready;
    if (this._closed) throw storeError('TCPStore: the store is closed', 'KD_CONNECTION_CLOSED');
    const id = this._next++;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: null };
      if (timeout != null) {
        entry.timer = setTimeout(() => {
          this._pending.delete(id); this._refresh();
          this._sock.write(JSON.stringify({ id: this._next++, op: 'cancel', target: id }) + '\n');
          reject(storeError(`TCPStore: timed out after ${timeout} ms waiting for key(s) ${JSON.stringify(req.keys)}`, 'KD_TIMEOUT'));
        }, timeout);
      }
      this._pending.set(id, entry); this._refresh();
      this._sock.write(JSON.stringify({ ...req, id }) + '\n');
    });
  }
  /** set(key, value): value a string, Buffer or Uint8Array. */
  async set(key, value) { await this._request({ op: 'set', key: checkKey(key), value: toBuf(value).toString('base64') }); }
  /** get(key) -> Buffer; waits up to the store's timeout for the key to be set. */
  async get(key) { const m = await this._request({ op: 'get', keys: [checkKey(key)] }, this.timeout); return Buffer.from(m.value, 'base64'); }
  /** add(key, amount) -> the new integer value (a missing key counts as 0). */
  async add(key, amount) {
    if (!Number.isInteger(amount)) throw typeError(`TCPStore.add: amount must be an integer, got ${amount}`);
    return (await this._request({ op: 'add', key: checkKey(key), amount })).value;
  }
  /** compareSet(key, expected, desired) -> the value now held (PyTorch's compare_set). */
  async compareSet(key, expected, desired) {
    const m = await this._request({ op: 'compareSet', key: checkKey(key), expected: toBuf(expected).toString('base64'), value: toBuf(desired).toString('base64') });
    return Buffer.from(m.value, 'base64');
  }
  /** wait(keys, timeout = the store's timeout): resolves when every key is set. */
  async wait(keys, timeout = this.timeout) {
    if (!Array.isArray(keys)) throw typeError('TCPStore.wait: keys must be an array of strings');
    keys.forEach(checkKey);
    await this._request({ op: 'wait', keys }, timeout);
  }
  /** check(keys) -> whether every key is set, without waiting. */
  async check(keys) {
    if (!Array.isArray(keys)) throw typeError('TCPStore.check: keys must be an array of strings');
    keys.forEach(checkKey);
    return (await this._request({ op: 'check', keys })).value;
  }
  /** deleteKey(key) -> whether the key existed. */
  async deleteKey(key) { return (await this._request({ op: 'deleteKey', key: checkKey(key) })).value; }
  async numKeys() { return (await this._request({ op: 'numKeys' })).value; }
  setTimeout(ms) { this.timeout = ms; }
  /** Closes this client, and the server on the master. */
  async close() {
    await this.ready.catch(() => {});
    if (this._sock) this._sock.destroy();
    this._closed = true;
    if (this._server) await this._server.close();
  }
}

/** PrefixStore(prefix, store): every key is stored as `${prefix}/${key}` in the wrapped store. */
class PrefixStore {
  constructor(prefix, store) {
    if (typeof prefix !== 'string') throw typeError(`PrefixStore: prefix must be a string, got ${typeof prefix}`);
    this.prefix = prefix; this.store = store;
  }
  _k(key) { return `${this.prefix}/${checkKey(key)}`; }
  set(key, value) { return this.store.set(this._k(key), value); }
  get(key) { return this.store.get(this._k(key)); }
  add(key, amount) { return this.store.add(this._k(key), amount); }
  compareSet(key, e, d) { return this.store.compareSet(this._k(key), e, d); }
  wait(keys, timeout) { return this.store.wait(keys.map((k) => this._k(k)), timeout); }
  check(keys) { return this.store.check(keys.map((k) => this._k(k))); }
  deleteKey(key) { return this.store.deleteKey(this._k(key)); }
  numKeys() { return this.store.numKeys(); }
  get timeout() { return this.store.timeout; }
  setTimeout(ms) { this.store.setTimeout(ms); }
}

module.exports = { TCPStore, PrefixStore };
