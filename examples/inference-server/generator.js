// generator.js - continuous batching of greedy text generation for server.js's POST /generate,
// on a GPT-2 of examples/gpt2: requests wait in a bounded queue; between decode steps, waiting
// requests join the running batch (up to `slots` sequences: each prompt is prefilled alone, its
// key/value rows copied into a SlotCache row) and finished or cancelled ones leave it; each step
// feeds every running sequence its last token in one forward pass (its own position, its own cache
// length, masked past its end), so a request's tokens are those it would get decoded alone.
// Greedy by default; a request may sample (doSample, temperature, topK, topP, seed: examples/gpt2's
// options, drawn per row with the request's own seeded generator, so a seed gives the tokens it
// gives decoded alone). Tokens go to each request's onToken as they are produced. Runs on the calling (main) thread,
// one forward at a time, yielding to the event loop between steps; forwards run under
// kd.inferenceMode with kd.tidy.
'use strict';

const { HttpError } = require('./request');
const { SlotCache } = require('./slot-cache');
const { checkOptions, candidates, pickTokens, seededRandom } = require('../gpt2/generation');

class Generator {
  /**
   * model: a GPT2LMHeadModel (eval mode). Options: slots (most sequences decoding at once),
   * maxLength (prompt + new tokens of one request, at most nPositions), maxWaiting (queued
   * requests beyond the running ones; more: 503 QUEUE_FULL), maxNewTokens (the default per request),
   * timeoutMs (a request still waiting for a row after this is answered 503 TIMEOUT).
   */
  constructor(model, { slots = 8, maxLength = model.config.nPositions, maxWaiting = 64, maxNewTokens = 20, timeoutMs = 10000 } = {}) {
    this.kd = require('../..');
    this.model = model;
    this.device = model.transformer.wte.weight.device;
    this.cache = this.kd.inferenceMode(() => new SlotCache(this.kd, model, slots, maxLength));
    Object.assign(this, { slots, maxLength, maxWaiting, timeoutMs, defaultNewTokens: maxNewTokens });
    this.config = { kind: 'gpt2', vocabSize: model.config.vocabSize, nPositions: model.config.nPositions, nLayer: model.config.nLayer,
      nEmbd: model.config.nEmbd, nHead: model.config.nHead, slots, maxLength };
    this.waiting = [];
    this.active = []; // request per cache row
    this.running = false;
    this.closed = false;
    this.failed = null;
    this.idleWaiters = [];
    this.stats = { requests: 0, tokens: 0, steps: 0, stepRows: 0, maxStepRows: 0, cancelled: 0, rejectedFull: 0, timedOut: 0 };
  }

  full() { return this.waiting.length >= this.maxWaiting; }

  /**
   * A request from a parsed JSON body {"prompt": [token ids], "maxNewTokens"?, "eosTokenId"?,
   * "doSample"?, "temperature"?, "topK"?, "topP"?, "seed"?}: {prompt, maxNewTokens, eosTokenId,
   * sampling (null: greedy)}, or a 400 HttpError saying what is wrong.
   */
  check(body) {
    const bad = (m) => new HttpError(400, 'INVALID_INPUT', m);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('expected a JSON object {"prompt": [token ids], "maxNewTokens": n}');
    const { vocabSize } = this.config;
    const { prompt, maxNewTokens = this.defaultNewTokens, eosTokenId = null } = body;
    if (!Array.isArray(prompt) || prompt.length === 0) throw bad('"prompt" must be a non-empty array of token ids');
    if (prompt.length >= this.maxLength) throw bad(`"prompt" holds ${prompt.length} tokens; at most ${this.maxLength - 1}`);
    prompt.forEach((id, i) => { if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw bad(`prompt[${i}] = ${JSON.stringify(id)} is not a token id in [0, ${vocabSize})`); });
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw bad(`"maxNewTokens" must be a positive integer, got ${JSON.stringify(maxNewTokens)}`);
    if (prompt.length + maxNewTokens > this.maxLength) {
      throw bad(`prompt (${prompt.length}) + maxNewTokens (${maxNewTokens}) exceeds the server's maxLength=${this.maxLength}`);
    }
    if (eosTokenId !== null && !(Number.isInteger(eosTokenId) && eosTokenId >= 0 && eosTokenId < vocabSize)) {
      throw bad(`"eosTokenId" must be null or a token id in [0, ${vocabSize}), got ${JSON.stringify(eosTokenId)}`);
    }
    let sampling = null;
    if (body.doSample !== undefined && body.doSample !== false) {
      const given = {};
      for (const k of ['doSample', 'temperature', 'topK', 'topP', 'seed']) if (body[k] !== undefined) given[k] = body[k];
      try { sampling = checkOptions(given, vocabSize); } catch (e) { throw bad(e.message); }
    }
    return { prompt, maxNewTokens, eosTokenId, sampling };
  }

  /**
   * Queues a checked request; onToken(id, index) is called for each token as it is produced.
   * Returns {promise, cancel}: promise resolves to {tokens, finishReason: 'length' | 'eos'} or
   * rejects with an HttpError; cancel() ends the request (its row leaves at the next step).
   */
  submit({ prompt, maxNewTokens, eosTokenId, sampling = null }, onToken = () => {}) {
    let req = null;
    const promise = new Promise((resolve, reject) => {
      if (this.closed) throw new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down');
      if (this.failed) throw this.failed;
      if (this.full()) {
        this.stats.rejectedFull++;
        throw new HttpError(503, 'QUEUE_FULL', `${this.waiting.length} generation requests are waiting (at most ${this.maxWaiting}); try again later`, { 'retry-after': '1' });
      }
      const rand = sampling ? seededRandom(sampling.seed ?? Math.floor(Math.random() * 2 ** 32)) : null;
      req = { prompt, maxNewTokens, eosTokenId, sampling, rand, onToken, resolve, reject, tokens: [], last: null, done: false };
      req.timer = setTimeout(() => {
        if (!this.waiting.includes(req)) return; // (running: its tokens are flowing)
        this.stats.timedOut++;
        this.finish(req, null, new HttpError(503, 'TIMEOUT', `no row free within ${this.timeoutMs} ms; the server is overloaded`, { 'retry-after': '1' }));
      }, this.timeoutMs);
      this.waiting.push(req);
      this.stats.requests++;
      this.run();
    });
    const cancel = () => {
      if (req && !req.done) { this.stats.cancelled++; this.finish(req, null, new HttpError(499, 'CLIENT_CLOSED', 'the client closed the connection')); }
    };
    return { promise, cancel };
  }

  finish(req, reason, error) {
    if (req.done) return;
    req.done = true;
    clearTimeout(req.timer);
    const w = this.waiting.indexOf(req);
    if (w >= 0) this.waiting.splice(w, 1);
    if (error) req.reject(error); else req.resolve({ tokens: req.tokens, finishReason: reason });
  }

  /** Records a token for req; true when req is finished (it does not take a row, or leaves its row). */
  emit(req, id) {
    if (req.done) return true;
    req.tokens.push(id);
    this.stats.tokens++;
    req.last = id;
    try { req.onToken(id, req.tokens.length - 1); } catch (e) { this.finish(req, null, e); return true; }
    if (id === req.eosTokenId) { this.finish(req, 'eos'); return true; }
    if (req.tokens.length === req.maxNewTokens) { this.finish(req, 'length'); return true; }
    return false;
  }

  /** Prefills req's prompt alone, emits its first token and, unless that ended it, gives it a row. */
  admit(req) {
    const { kd, model } = this;
    const T = req.prompt.length;
    const single = kd.inferenceMode(() => model.makeCache(1, T));
    try {
      const next = kd.inferenceMode(() => kd.tidy(() => {
        const ids = kd.tensor(BigInt64Array.from(req.prompt, BigInt), { device: this.device }).view(1, T);
        return this.pick(model(ids, single, { lastOnly: true }).select(1, 0), [req])[0];
      }));
      if (!this.emit(req, next)) {
        this.cache.add(single);
        this.active.push(req);
      }
    } finally {
      single.dispose();
    }
  }

  /**
   * The next token of each row of logits (rows.length, vocab), rows[b] its request: the argmax, or
   * a draw from the request's candidates when it samples (read to the host here).
   */
  pick(logits, rows) {
    const greedy = Array.from(logits.argmax(-1).cpu().dataSync(), Number);
    return rows.map((req, b) => {
      if (!req.sampling) return greedy[b];
      const host = candidates(logits.narrow(0, b, 1), req.sampling).map((t) => t.cpu().dataSync());
      return pickTokens(host, 1, req.sampling, req.rand)[0];
    });
  }

  /** Removes the finished rows (highest first: the last row moves into a freed one). */
  dropFinished() {
    for (let r = this.active.length - 1; r >= 0; r--) {
      if (!this.active[r].done) continue;
      this.cache.remove(r);
      this.active[r] = this.active[this.active.length - 1];
      this.active.pop();
    }
  }

  /** One decode step: every running sequence's next token. */
  async step() {
    const { kd, model, cache } = this;
    const B = this.active.length;
    const rows = this.active.slice();
    const sampling = rows.some((r) => r.sampling);
    const out = kd.inferenceMode(() => kd.tidy(() => {
      const ids = kd.tensor(BigInt64Array.from(rows, (r) => BigInt(r.last)), { device: this.device }).view(B, 1);
      const logits = model(ids, cache, { lastOnly: true, attentionMask: cache.mask(this.device) }).select(1, 0);
      return sampling ? this.pick(logits, rows) : logits.argmax(-1);
    }));
    cache.advance();
    let host = out;
    // (greedy steps read the tokens asynchronously: the event loop runs while the device works)
    if (!sampling) { try { host = Array.from(await out.dataAsync(), Number); } finally { out.dispose(); } }
    this.stats.steps++;
    this.stats.stepRows += B;
    this.stats.maxStepRows = Math.max(this.stats.maxStepRows, B);
    for (let b = 0; b < B; b++) this.emit(rows[b], host[b]);
  }

  async run() {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.failed && (this.active.length || this.waiting.length)) {
        this.dropFinished();
        while (this.waiting.length && this.active.length < this.slots) {
          const req = this.waiting.shift();
          clearTimeout(req.timer);
          this.admit(req);
        }
        this.dropFinished();
        if (this.active.length) await this.step();
        await new Promise(setImmediate);
      }
    } catch (e) {
      // a failure inside the model: every request in the batch or queue gets it, the cache is reset
      this.failed = new HttpError(500, 'INTERNAL', `generation failed: ${e.message}`);
      for (const r of [...this.active, ...this.waiting]) this.finish(r, null, this.failed);
    } finally {
      this.dropFinished();
      this.running = false;
      if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  idle() { return !this.running && this.waiting.length === 0 && this.active.length === 0; }

  /** Refuses new requests; resolves when every accepted one has been answered. */
  drain() {
    this.closed = true;
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Refuses new requests and ends every accepted one 503 at once. */
  close() {
    this.closed = true;
    for (const r of [...this.waiting, ...this.active]) this.finish(r, null, new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down'));
  }

  /** Frees the cache (after close() and the loop's end). */
  dispose() { this.cache.dispose(); }
}

module.exports = { Generator };
