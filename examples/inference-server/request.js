// request.js - what server.js accepts from a client, checked before any work is queued: the body
// (JSON only, at most `limit` bytes, refused from its Content-Length before it is read) and the
// inputs in it (rows of exactly inFeatures finite numbers). Every refusal is an HttpError with a
// status, a stable code and a message that says what was expected.
'use strict';

class HttpError extends Error {
  /** headers: extra response headers (retry-after, ...). */
  constructor(status, code, message, headers = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** Refuses a request whose Content-Type is given and is not JSON (415). */
function checkContentType(req) {
  const type = req.headers['content-type'];
  if (type === undefined) return;
  const mime = type.split(';')[0].trim().toLowerCase();
  if (mime !== 'application/json') throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got '${type}'`);
}

/** The body of req as text; 413 when it is (or says it will be) larger than limit bytes. */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, 'BODY_TOO_LARGE', `request body larger than ${limit} bytes`, { connection: 'close' });
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) { reject(tooLarge()); return; }
    const chunks = [];
    let size = 0;
    let failed = false;
    req.on('data', (c) => {
      if (failed) return;
      size += c.length;
      if (size > limit) { failed = true; chunks.length = 0; reject(tooLarge()); return; }
      chunks.push(c);
    });
    req.on('end', () => { if (!failed) resolve(Buffer.concat(chunks).toString('utf8')); });
    req.on('error', (e) => { failed = true; reject(e); });
    req.on('aborted', () => { failed = true; reject(new HttpError(400, 'ABORTED', 'the client aborted the request')); });
  });
}

const SHAPE_HINT = 'expected a JSON object {"inputs": [[...], ...]} or {"input": [...]}';

/** {"inputs": [...]} or {"input": [...]} -> {x: Float32Array of n rows of inF finite numbers, n}. */
function parseInputs(text, inF) {
  let body;
  try { body = JSON.parse(text); } catch (e) { throw new HttpError(400, 'INVALID_JSON', `invalid JSON: ${e.message}`); }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'INVALID_INPUT', SHAPE_HINT);
  let rows;
  if (Array.isArray(body.inputs)) rows = body.inputs;
  else if (Array.isArray(body.input)) rows = [body.input];
  else throw new HttpError(400, 'INVALID_INPUT', SHAPE_HINT);
  if (rows.length === 0) throw new HttpError(400, 'INVALID_INPUT', '"inputs" is empty');
  const x = new Float32Array(rows.length * inF);
  rows.forEach((row, i) => {
    if (!Array.isArray(row)) throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}] is not an array`);
    const flat = Array.isArray(row[0]) ? row.flat() : row;
    if (flat.length !== inF) throw new HttpError(400, 'INVALID_SHAPE', `inputs[${i}] has ${flat.length} values, expected ${inF}`);
    for (let j = 0; j < inF; j++) {
      const v = flat[j];
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}][${j}] is not a finite number`);
      x[i * inF + j] = v;
    }
  });
  return { x, n: rows.length };
}

module.exports = { HttpError, checkContentType, readBody, parseInputs };
