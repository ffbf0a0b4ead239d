// file_store.js - kd.distributed.FileStore: c10d's store over a file that every process opens
// (a shared file system). The file is an append-only log, one JSON record a line:
// {op: 'set'|'add'|'del'|'cas', key, value|amount|expected, id}. Each write is one append
// (O_APPEND), so writers need no lock: a process that adds, deletes or compare-sets appends its
// record, then replays the log up to that record (found by its unique id) to learn its result,
// and every process replaying the same log agrees. get and wait poll the log until the keys are
// set or the timeout passes (KD_TIMEOUT).
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const { KindlingError, typeError } = require('../errors');

const checkKey = (k) => { if (typeof k !== 'string') throw typeError(`store key must be a string, got ${typeof k}`); return k; };
const toB64 = (v) => {
  if (typeof v === 'string') return Buffer.from(v).toString('base64');
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  throw typeError(`store value must be a string, Buffer or Uint8Array, got ${typeof v}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class FileStore {
  /** new FileStore(fileName, worldSize = -1, { timeout = 300000 ms }) */
  constructor(fileName, worldSize = -1, options = {}) {
    if (typeof fileName !== 'string' || !fileName) throw typeError('FileStore: fileName must be a non-empty string');
    this.path = fileName; this.worldSize = worldSize; this.timeout = options.timeout ?? 300000;
    this._tag = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`; this._n = 0;
    try { fs.closeSync(fs.openSync(fileName, 'a')); } catch (e) {
      throw new KindlingError(`FileStore: cannot open '${fileName}': ${e.message}`, 'KD_IO_ERROR');
    }
  }
  _append(rec) {
    rec.id = `${this._tag}-${this._n++}`;
    fs.appendFileSync(this.path, JSON.stringify(rec) + '\n');
    return rec.id;
  }
  // Replays the log (up to the record `untilId` when given); returns { data, result }.
  _replay(untilId = null) {
    const text = fs.readFileSync(this.path, 'utf8');
    const data = new Map();
    let result;
    for (const line of text.split('\n').slice(0, -1)) { // the last piece is '' or a record still being written
      const r = JSON.parse(line);
      const cur = data.get(r.key);
      if (r.op === 'set') data.set(r.key, r.value);
      else if (r.op === 'add') {
        const n = cur === undefined ? 0 : Number(Buffer.from(cur, 'base64').toString());
        if (Number.isInteger(n)) { data.set(r.key, Buffer.from(String(n + r.amount)).toString('base64')); result = n + r.amount; } else result = null;
      } else if (r.op === 'del') { result = data.delete(r.key); }
      else if (r.op === 'cas') {
        if (cur === undefined ? r.expected === '' : cur === r.expected) data.set(r.key, r.value);
        result = data.has(r.key) ? data.get(r.key) : r.expected;
      }
      if (untilId !== null && r.id === untilId) return { data, result };
    }
    return { data, result };
  }
  async _waitFor(keys, timeout) {
    const deadline = Date.now() + timeout;
    for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
      const { data } = this._replay();
      if (keys.every((k) => data.has(k))) return data;
      if (Date.now() >= deadline) throw new KindlingError(`FileStore: timed out after ${timeout} ms waiting for key(s) ${JSON.stringify(keys)}`, 'KD_TIMEOUT');
      await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
    }
  }
  async set(key, value) { this._append({ op: 'set', key: checkKey(key), value: toB64(value) }); }
  async get(key) { return Buffer.from((await this._waitFor([checkKey(key)], this.timeout)).get(key), 'base64'); }
  async add(key, amount) {
    if (!Number.isInteger(amount)) throw typeError(`FileStore.add: amount must be an integer, got ${amount}`);
    const { result } = this._replay(this._append({ op: 'add', key: checkKey(key), amount }));
    if (result === null) throw new KindlingError(`FileStore: key '${key}' does not hold an integer`, 'KD_DISTRIBUTED');
    return result;
  }
  async compareSet(key, expected, desired) {
    const { result } = this._replay(this._append({ op: 'cas', key: checkKey(key), expected: toB64(expected), value: toB64(desired) }));
    return Buffer.from(result, 'base64');
  }
  async wait(keys, timeout = this.timeout) {
    if (!Array.isArray(keys)) throw typeError('FileStore.wait: keys must be an array of strings');
    keys.forEach(checkKey);
    await this._waitFor(keys, timeout);
  }
  async check(keys) {
    if (!Array.isArray(keys)) throw typeError('FileStore.check: keys must be an array of strings');
    keys.forEach(checkKey);
    const { data } = this._replay();
    return keys.every((k) => data.has(k));
  }
  async deleteKey(key) { return this._replay(this._append({ op: 'del', key: checkKey(key) })).result; }
  async numKeys() { return this._replay().data.size; }
  setTimeout(ms) { this.timeout = ms; }
  async close() {}
}

module.exports = { FileStore };
