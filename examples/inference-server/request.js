// request.js - what server.js accepts from a client, checked before any work is queued: the body
// (JSON read as UTF-8 only; at most `limit` bytes, refused from its Content-Length before it is
// read; at most maxRows rows in "inputs", MAX_DEPTH levels of nesting and maxArrays arrays and
// objects, checked as the body streams in, so that an oversized batch, a deeply nested body or one
// JSON.parse would make too many arrays for is refused without parsing it) and the inputs in it
// (rows of exactly inFeatures numbers that a float32 holds, every count checked before anything
// is allocated from it). Every refusal is an HttpError with a status, a stable code and a message
// that says what was expected.
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

/**
 * Refuses a request whose Content-Type is given and is not JSON read as UTF-8 (415):
 * application/json (any case) with no charset or charset=utf-8 (any case, quoted or not); any
 * other charset, a charset given twice or a header that does not parse is refused, since the body
 * is read as UTF-8 whatever it says.
 */
function checkContentType(req) {
  const type = req.headers['content-type'];
  if (type === undefined) return;
  const media = parseMediaType(type);
  if (media === null || media.type !== 'application/json') throw unsupported(`Content-Type must be application/json (or application/octet-stream with an X-Shape header), got '${type}'`);
  const charsets = media.params.filter(([name]) => name === 'charset').map(([, value]) => value);
  if (charsets.length > 1) {
    throw unsupported(`Content-Type gives its charset ${charsets.length} times ('${type}'); send application/json with charset=utf-8 or none`);
  }
  if (charsets.length === 1 && charsets[0].toLowerCase() !== 'utf-8') {
    throw unsupported(`the body of application/json is read as UTF-8: charset must be utf-8 or absent, got '${charsets[0]}'`);
  }
}
const unsupported = (message) => new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', message);

const TOKEN = "[-!#$%&'*+.^_`|~0-9A-Za-z]+";
const MEDIA_TYPE = new RegExp(`^[ \\t]*(${TOKEN}/${TOKEN})[ \\t]*`, 'y');
const PARAMETER = new RegExp(`;[ \\t]*(?:(${TOKEN})=(?:(${TOKEN})|"((?:[^"\\\\]|\\\\.)*)"))?[ \\t]*`, 'y');

/**
 * A Content-Type value as RFC 9110 (8.3.1) writes it: {type: lower-cased type/subtype, params:
 * [[lower-cased name, value (unquoted)], ...] in order}, or null when it does not parse.
 */
function parseMediaType(value) {
  MEDIA_TYPE.lastIndex = 0;
  const m = MEDIA_TYPE.exec(value);
  if (!m) return null;
  const params = [];
  PARAMETER.lastIndex = MEDIA_TYPE.lastIndex;
  while (PARAMETER.lastIndex < value.length) {
    const p = PARAMETER.exec(value);
    if (!p) return null;
    if (p[1] !== undefined) params.push([p[1].toLowerCase(), p[2] !== undefined ? p[2] : p[3].replace(/\\(.)/g, '$1')]);
  }
  return { type: m[1].toLowerCase(), params };
}

/** 413 for a batch larger than maxRows (got: the count, or what is known of it). */
const tooManyRows = (maxRows, got, headers = {}) => new HttpError(413, 'BATCH_TOO_LARGE', `a request may hold at most ${maxRows} inputs, got ${got}`, headers);

/** How deep a body may nest: {"inputs": [[[28 numbers] x 28] ...]} is 4 levels. */
const MAX_DEPTH = 8;

/**
 * Counts the rows of `{"inputs": [row, row, ...]}` in a JSON body fed chunk by chunk, without
 * parsing it: a scan of the bytes that tracks strings (and their escapes), the nesting depth and
 * the key being read at the top level, and counts the arrays that open directly inside the
 * "inputs" array. feed() throws 413 BATCH_TOO_LARGE as soon as the count passes maxRows, 400
 * TOO_DEEP when the nesting passes maxDepth (JSON.parse would recurse through all of it first),
 * and 400 TOO_MANY_ARRAYS when the body opens more than maxArrays arrays and objects, anywhere
 * (JSON.parse would make each: 1.6 MB of `[],` is 530,000 arrays, ~100 MB and ~200 ms).
 * It sees the keys JSON.parse will: a key's escapes are decoded (`"\u0069nputs"` is "inputs"),
 * and every "inputs" member is counted, the last of them being the one JSON.parse keeps (an
 * earlier one past maxRows is refused too). Malformed JSON is not its business (JSON.parse
 * refuses it later): the count is exact for well-formed bodies and harmless for the rest.
 * (Parsing a batch of 65 rows of 784 numbers, about 860 KB, would block the event loop for ~3 ms
 * before the batch size could be checked; the scan costs a fraction of that and runs one network
 * chunk at a time.)
 */
class BodyScanner {
  constructor(maxRows, { maxDepth = MAX_DEPTH, maxArrays = Infinity } = {}) {
    this.maxRows = maxRows;
    this.maxDepth = maxDepth;
    this.maxArrays = maxArrays;
    this.rows = 0;
    this.arrays = 0; // arrays and objects opened
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.key = '';       // the last top-level key read, decoded (null: not one that matters here)
    this.rawKey = '';    // the top-level key being read, as written (up to KEY_MAX_RAW + 1 bytes)
    this.readingKey = false;
    this.expectKey = false;
    this.topObject = false; // the body is an object (a top-level array has no keys)
    this.inInputs = false; // inside the top-level "inputs" array (depth 2 and deeper)
  }

  /**
   * Scans one chunk. It jumps from one byte that matters to the next (a quote, a backslash in a
   * string, a bracket or brace, a comma between top-level members), found with Buffer.indexOf
   * (native) and remembered until passed, so the numbers in between cost no JavaScript.
   */
  feed(buf) {
    let { rows, arrays, depth, inString, escaped, key, rawKey, readingKey, expectKey, topObject, inInputs } = this;
    const next = [-1, -1, -1, -1, -1, -1, -1]; // next position of each byte in SCAN_BYTES (Infinity: none)
    const find = (k, from) => {
      if (next[k] < from) { const p = buf.indexOf(SCAN_BYTES[k], from); next[k] = p < 0 ? Infinity : p; }
      return next[k];
    };
    for (let i = 0; i < buf.length;) {
      if (inString) {
        // (a key keeps its bytes up to its closing quote, escapes and all, to be decoded then)
        const j = escaped ? i : Math.min(find(QUOTE, i), find(BACKSLASH, i));
        if (readingKey && rawKey.length <= KEY_MAX_RAW) {
          rawKey += buf.toString('latin1', i, Math.min(j + 1, buf.length, i + KEY_MAX_RAW + 1 - rawKey.length));
        }
        if (j === Infinity) break;
        if (escaped) escaped = false;
        else if (buf[j] === 0x5c) escaped = true;
        else if (readingKey) { inString = false; readingKey = false; key = decodeKey(rawKey); } else inString = false;
        i = j + 1;
        continue;
      }
      const j = Math.min(find(QUOTE, i), find(OPEN_BRACKET, i), find(CLOSE_BRACKET, i), find(OPEN_BRACE, i), find(CLOSE_BRACE, i),
        depth === 1 ? find(COMMA, i) : Infinity);
      if (j === Infinity) break;
      const c = buf[j];
      i = j + 1;
      if (c === 0x22) { // a string opens
        inString = true;
        if (depth === 1 && expectKey) { readingKey = true; rawKey = '"'; expectKey = false; }
      } else if (c === 0x5b || c === 0x7b) { // [ {
        if (depth === 0) { topObject = c === 0x7b; expectKey = topObject; }
        else if (depth === 1 && c === 0x5b) { inInputs = key === 'inputs'; if (inInputs) rows = 0; } // (a repeated key: JSON.parse keeps the last)
        else if (depth === 2 && c === 0x5b && inInputs && ++rows > this.maxRows) {
          // (refused mid-body: the rest is not read, so the connection closes after the answer)
          throw tooManyRows(this.maxRows, `${rows} or more`, { connection: 'close' });
        }
        if (++depth > this.maxDepth) {
          throw new HttpError(400, 'TOO_DEEP', `JSON nested deeper than ${this.maxDepth} levels; ${SHAPE_HINT}`, { connection: 'close' });
        }
        if (++arrays > this.maxArrays) {
          throw new HttpError(400, 'TOO_MANY_ARRAYS', `JSON holding more than ${this.maxArrays} arrays and objects, more than a batch of ${this.maxRows} ` +
            `inputs needs; ${SHAPE_HINT}`, { connection: 'close' });
        }
      } else if (c === 0x5d || c === 0x7d) { // ] }
        depth--;
        if (depth === 1) inInputs = false;
      } else if (c === 0x2c) expectKey = topObject; // , between top-level members or elements (searched for at depth 1 only)
    }
    Object.assign(this, { rows, arrays, depth, inString, escaped, key, rawKey, readingKey, expectKey, topObject, inInputs });
  }
}
/**
 * The longest key, as written, that can decode to "inputs" (each letter as a 6-byte \uXXXX escape,
 * within its quotes): longer ones are not read to the end.
 */
const KEY_MAX_RAW = 6 * 'inputs'.length + 2;
/** A key as JSON.parse reads it, from its raw bytes with their quotes (null: too long or malformed). */
function decodeKey(raw) {
  if (raw.length > KEY_MAX_RAW) return null;
  try { return JSON.parse(raw); } catch { return null; }
}
const SCAN_BYTES = [0x22, 0x5c, 0x5b, 0x5d, 0x7b, 0x7d, 0x2c]; // " \ [ ] { } ,
const [QUOTE, BACKSLASH, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE, COMMA] = SCAN_BYTES.keys();

/**
 * The body of req as text (a Buffer with `binary`); 413 when it is (or says it will be) larger than limit bytes, or when
 * its "inputs" hold more than maxRows rows; 400 when it nests deeper than MAX_DEPTH or holds more
 * than maxArrays arrays and objects (BodyScanner; maxRows undefined: not scanned).
 */
function readBody(req, limit, { maxRows, maxArrays, binary = false } = {}) {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, 'BODY_TOO_LARGE', `request body larger than ${limit} bytes`, { connection: 'close' });
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) { reject(tooLarge()); return; }
    const scanner = maxRows === undefined ? null : new BodyScanner(maxRows, { maxArrays });
    const chunks = [];
    let size = 0;
    let failed = false;
    const fail = (e) => { failed = true; chunks.length = 0; reject(e); };
    req.on('data', (c) => {
      if (failed) return;
      size += c.length;
      if (size > limit) { fail(tooLarge()); return; }
      if (scanner) {
        try { scanner.feed(c); } catch (e) { fail(e); return; }
      }
      chunks.push(c);
    });
    req.on('end', () => { if (!failed) { const b = Buffer.concat(chunks); resolve(binary ? b : b.toString('utf8')); } });
    req.on('error', (e) => { failed = true; reject(e); });
    req.on('aborted', () => { failed = true; reject(new HttpError(400, 'ABORTED', 'the client aborted the request')); });
  });
}

/** The largest float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

const SHAPE_HINT = 'expected a JSON object {"inputs": [[...], ...]} or {"input": [...]}';

/**
 * {"inputs": [...]} or {"input": [...]} -> {x: Float32Array of n rows of inF finite numbers, n}: 400
 * for a value that is not a number or that float32 cannot hold (what rounds to one is taken); 413
 * for more than maxRows rows. Every count read from the body (rows, values in a row) is checked
 * before anything is allocated from it.
 */
function parseInputs(text, inF, maxRows) {
  let body;
  try { body = JSON.parse(text); } catch (e) { throw new HttpError(400, 'INVALID_JSON', `invalid JSON: ${e.message}`); }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'INVALID_INPUT', SHAPE_HINT);
  let rows;
  if (Array.isArray(body.inputs)) rows = body.inputs;
  else if (Array.isArray(body.input)) rows = [body.input];
  else throw new HttpError(400, 'INVALID_INPUT', SHAPE_HINT);
  if (rows.length === 0) throw new HttpError(400, 'INVALID_INPUT', '"inputs" is empty');
  if (rows.length > maxRows) throw tooManyRows(maxRows, rows.length);
  const x = new Float32Array(rows.length * inF);
  rows.forEach((row, i) => {
    if (!Array.isArray(row)) throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}] is not an array`);
    // a row is inF numbers, or arrays of them (28 x 28) read in order
    const nested = Array.isArray(row[0]);
    const count = nested ? row.reduce((c, v) => c + (Array.isArray(v) ? v.length : 1), 0) : row.length;
    if (count !== inF) throw new HttpError(400, 'INVALID_SHAPE', `inputs[${i}] has ${count} values, expected ${inF}`);
    let j = 0;
    const put = (v) => {
      // (a finite number can still be too large for a float32: 1e39 would become Infinity)
      if (typeof v !== 'number' || !Number.isFinite(Math.fround(v))) {
        const why = Number.isFinite(v) ? `= ${v} is outside float32's range (magnitude at most ${FLOAT32_MAX})` : 'is not a finite number';
        throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}][${j}] ${why}`);
      }
      x[i * inF + j++] = v;
    };
    for (const v of row) {
      if (nested && Array.isArray(v)) v.forEach(put); else put(v);
    }
  });
  return { x, n: rows.length };
}

/**
 * The largest JSON body server.js reads for a batch of maxBatch inputs of inFeatures values (a
 * number takes at most ~32 bytes), capped at maxJsonBytes (but never below one input's worth).
 */
const maxJsonBody = (maxBatch, inFeatures, maxJsonBytes = 64 * 2 ** 20) =>
  Math.min(maxBatch * inFeatures * 32 + 4096, Math.max(maxJsonBytes, inFeatures * 32 + 4096));

/** Whether req's Content-Type is application/octet-stream (a binary float32 body: parseBinary). */
function isBinary(req) {
  const type = req.headers['content-type'];
  const media = type === undefined ? null : parseMediaType(type);
  return media !== null && media.type === 'application/octet-stream';
}

/**
 * A binary body: little-endian float32 values, C order, shape in the X-Shape header: "N,d1,d2,..."
 * (a batch of N inputs of inputShape) or "d1,d2,..." (one input). -> {x, n}: 400 INVALID_SHAPE for
 * a header that does not parse or does not end with inputShape, or a body whose length is not
 * 4 * its element count; 400 INVALID_INPUT for a value that is not finite; 413 for N > maxRows.
 */
function parseBinary(buf, shapeHeader, inputShape, maxRows) {
  const want = inputShape.join(',');
  if (typeof shapeHeader !== 'string' || !/^ *\d{1,9}( *, *\d{1,9})* *$/.test(shapeHeader)) {
    throw new HttpError(400, 'INVALID_SHAPE', `a binary body needs an X-Shape header "N,${want}" (or "${want}"), got ${JSON.stringify(shapeHeader ?? null)}`);
  }
  const dims = shapeHeader.split(',').map(Number);
  const one = dims.length === inputShape.length;
  if (!(one || dims.length === inputShape.length + 1) || dims.slice(one ? 0 : 1).join(',') !== want) {
    throw new HttpError(400, 'INVALID_SHAPE', `X-Shape [${dims}] is not [N, ${want}] (or [${want}])`);
  }
  const n = one ? 1 : dims[0];
  if (n === 0) throw new HttpError(400, 'INVALID_INPUT', 'X-Shape holds no input (N = 0)');
  if (n > maxRows) throw tooManyRows(maxRows, n);
  const per = inputShape.reduce((a, b) => a * b, 1);
  if (buf.length !== 4 * n * per) {
    throw new HttpError(400, 'INVALID_SHAPE', `the body holds ${buf.length} bytes; X-Shape [${dims}] needs ${4 * n * per} (float32, little-endian)`);
  }
  const x = new Float32Array(n * per);
  // (a copy: the body's bytes need not be 4-aligned, and the values are checked on the way)
  for (let i = 0; i < x.length; i++) {
    const v = buf.readFloatLE(4 * i);
    if (!Number.isFinite(v)) throw new HttpError(400, 'INVALID_INPUT', `value ${i} (input ${Math.floor(i / per)}) is not a finite number`);
    x[i] = v;
  }
  return { x, n };
}

module.exports = { HttpError, BodyScanner, MAX_DEPTH, tooManyRows, checkContentType, readBody, parseInputs, isBinary, parseBinary, maxJsonBody };
