// faults.js - hostile clients for server.js, for its fault test and `load-test.js --faults`: each
// fault sends one bad request over a raw TCP socket (so that it can lie about Content-Length,
// trickle bytes or vanish mid-body) and resolves to the HTTP status the server answered (null if
// the server closed the connection without an answer, which only the abort fault expects).
// FAULTS lists them with the statuses a correct server may answer.
'use strict';

const net = require('node:net');

/**
 * Sends `head` then the chunks of `body` over a new connection to host:port, `gapMs` apart;
 * stalls (sends nothing more) when `stall` is set; destroys the socket after `abortAfterMs` if
 * given. Resolves to {status, body} of the first response, or {status: null} when the server
 * closed (or the abort happened) without one.
 */
function rawRequest({ host = '127.0.0.1', port }, head, body = [], { gapMs = 0, stall = false, abortAfterMs = null, timeoutMs = 30000 } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let data = '';
    let done = false;
    const finish = (r) => { if (done) return; done = true; clearTimeout(guard); socket.destroy(); resolve(r); };
    const guard = setTimeout(() => finish({ status: null, body: '', timedOut: true }), timeoutMs);
    socket.on('data', (d) => {
      data += d;
      const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/.exec(data);
      if (!m) return;
      const len = /content-length: *(\d+)/i.exec(m[2]);
      const bodyStart = m.index + m[0].length;
      if (!len || data.length - bodyStart >= Number(len[1])) finish({ status: Number(m[1]), body: data.slice(bodyStart), headers: m[2] });
    });
    // a server that answers then resets (a refused body it will not read) may reset before the
    // answer is read here: what arrived counts
    const ended = () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      finish({ status: m ? Number(m[1]) : null, body: data });
    };
    socket.on('error', ended);
    socket.on('close', ended);
    socket.on('connect', async () => {
      socket.write(head);
      if (abortAfterMs !== null) setTimeout(() => finish({ status: null, body: '', aborted: true }), abortAfterMs);
      for (const c of body) {
        if (done || stall) break;
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
        if (!done) socket.write(c);
      }
    });
  });
}

const post = (path, body, { type = 'application/json', length = Buffer.byteLength(body), extra = '' } = {}) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nConnection: close\r\n${extra}\r\n`;

/** A valid row of n numbers (for faults that must pass the JSON checks but fail later). */
const row = (n) => Array.from({ length: n }, (_, i) => (i % 7) / 7);

/**
 * build(model), made once per model: the large bodies (a megabyte for tooManyRows and
 * chunkedTooLarge) cost the client as much CPU to build as the server to refuse, and the client
 * shares the machine with the server it measures.
 */
const perModel = (build) => {
  const made = new Map();
  return (m) => {
    const k = `${m.inFeatures}/${m.maxBatch}/${m.maxBody}`;
    if (!made.has(k)) made.set(k, build(m));
    return made.get(k);
  };
};
const oneRow = perModel((m) => JSON.stringify({ input: row(m.inFeatures) }));

const notANumberBody = perModel((m) => JSON.stringify({ input: row(m.inFeatures).map((v, i) => (i === 3 ? 'NaN' : v)) }));
const overflowingBody = perModel((m) => `{"input": [1e400${',0'.repeat(m.inFeatures - 1)}]}`);
const float32OverflowBody = perModel((m) => `{"input": [0, -1e39${',0'.repeat(m.inFeatures - 2)}]}`); // (a finite double)
const tooManyRowsBody = perModel((m) => Buffer.from(JSON.stringify({ inputs: Array.from({ length: m.maxBatch + 1 }, () => row(m.inFeatures)) })));
/**
 * As many empty rows as fit under the body limit, under a key spelled with escapes that JSON.parse
 * reads as "inputs" (after a small valid batch under the plain key, when `after`: the last of a
 * repeated key is the one JSON.parse keeps).
 */
const escapedKeyBody = (key, after) => perModel((m) => {
  const head = `{${after ? `"inputs": [${JSON.stringify(row(m.inFeatures))}], ` : ''}"${key}": [`;
  const n = Math.floor((m.maxBody - head.length - 2) / 3);
  return Buffer.from(`${head}${'[],'.repeat(n - 1)}[]]}`);
});
const escapedKeyRowsBody = escapedKeyBody('\\u0069nputs', false);
const repeatedEscapedKeyRowsBody = escapedKeyBody('in\\u0070\\u0075ts', true);
/** One row of as many empty arrays as fit under the body limit: JSON.parse would make each. */
const arraysInOneRowBody = perModel((m) => Buffer.from(`{"inputs": [[${'[],'.repeat(Math.floor((m.maxBody - 20) / 3))}[]]]}`));
const chunkedTooLargeBody = perModel((m) => {
  const piece = 'x'.repeat(65536);
  const chunk = Buffer.from(`${piece.length.toString(16)}\r\n${piece}\r\n`);
  return Array.from({ length: Math.ceil(m.maxBody / piece.length) + 2 }, () => chunk);
});

/**
 * The faults: name -> {expect: statuses a correct server may answer, send(target, model)}, where
 * model = {inFeatures, maxBatch, maxBody}.
 */
const FAULTS = {
  malformedJson: { expect: [400], send: (t) => { const b = '{"inputs": [[1, 2,'; return rawRequest(t, post('/predict', b), [b]); } },
  jsonNotObject: { expect: [400], send: (t) => { const b = '[[1, 2, 3]]'; return rawRequest(t, post('/predict', b), [b]); } },
  jsonNull: { expect: [400], send: (t) => rawRequest(t, post('/predict', 'null'), ['null']) },
  wrongShape: { expect: [400], send: (t) => { const b = JSON.stringify({ inputs: [[1, 2, 3]] }); return rawRequest(t, post('/predict', b), [b]); } },
  notANumber: { expect: [400], send: (t, m) => { const b = notANumberBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  overflowingNumber: { expect: [400], send: (t, m) => { const b = overflowingBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  float32Overflow: { expect: [400], send: (t, m) => { const b = float32OverflowBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  deepNesting: { expect: [400], send: (t) => { const b = `{"inputs": ${'['.repeat(5000)}${']'.repeat(5000)}}`; return rawRequest(t, post('/predict', b), [b]); } },
  tooManyRows: { expect: [413], send: (t, m) => { const b = tooManyRowsBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  // a batch past maxBatch under a key spelled with escapes: refused as it streams in, never parsed
  escapedKeyRows: { expect: [413], send: (t, m) => { const b = escapedKeyRowsBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  repeatedEscapedKeyRows: { expect: [413], send: (t, m) => { const b = repeatedEscapedKeyRowsBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  arraysInOneRow: { expect: [400], send: (t, m) => { const b = arraysInOneRowBody(m); return rawRequest(t, post('/predict', b), [b]); } },
  declaredTooLarge: { expect: [413], send: (t, m) => rawRequest(t, post('/predict', '', { length: m.maxBody + 1 }), ['{"inputs": ['], { stall: true }) },
  // (413, or a reset: a client still sending what the server refused may see the connection reset
  // before it reads the answer, as TCP does when a socket closes with unread bytes)
  chunkedTooLarge: {
    expect: [413, null],
    send: (t, m) => {
      const head = 'POST /predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
      return rawRequest(t, head, chunkedTooLargeBody(m));
    },
  },
  wrongContentType: { expect: [415], send: (t, m) => { const b = oneRow(m); return rawRequest(t, post('/predict', b, { type: 'text/plain' }), [b]); } },
  // JSON in another charset: the server reads bodies as UTF-8 only
  wrongCharset: {
    expect: [415],
    send: (t, m) => { const b = Buffer.from(oneRow(m), 'utf16le'); return rawRequest(t, post('/predict', '', { type: 'application/json; charset=utf-16le', length: b.length }), [b]); },
  },
  wrongMethod: { expect: [405], send: (t) => rawRequest(t, 'PUT /predict HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n') },
  unknownRoute: { expect: [404], send: (t) => rawRequest(t, 'GET /admin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n') },
  badRequestLine: { expect: [400], send: (t) => rawRequest(t, 'BLAH\r\n\r\n') },
  // a client that sends its headers and part of its body, then nothing: 408 after the body timeout
  slowBody: { expect: [408], send: (t) => rawRequest(t, post('/predict', '', { length: 1000 }), ['{"inputs": ['], { stall: true }) },
  // slowloris: the headers never end
  slowHeaders: { expect: [408, null], send: (t) => rawRequest(t, 'POST /predict HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n', [], { stall: true }) },
  // a client that goes away in the middle of its body: nothing to answer, nothing may break
  abortMidBody: { expect: [null], send: (t, m) => { const b = oneRow(m); return rawRequest(t, post('/predict', b), [b.slice(0, 100)], { stall: true, abortAfterMs: 20 }); } },
};

module.exports = { FAULTS, rawRequest };
