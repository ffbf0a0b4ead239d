// serialization.js - kd.save / kd.load in the safetensors format, and model + optimizer
// checkpoints (kd.saveCheckpoint / kd.loadCheckpoint).
//
// The safetensors format (https://github.com/huggingface/safetensors), byte-compatible with
// Python's `safetensors` package:
//   [8 bytes]  N, the header length, unsigned 64-bit little-endian
//   [N bytes]  a JSON object, UTF-8, padded with spaces so that 8 + N is a multiple of 8:
//                { "__metadata__": { "<str>": "<str>", ... },            (optional)
//                  "<name>": { "dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end] }, ... }
//   [rest]     the tensors' bytes, row-major, little-endian; data_offsets are relative to the start
//              of this section. kindling writes the tensors back to back in the order given
//              (no gaps), as Python's writer does, so that Python's strict reader accepts them.
// dtype codes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL (kindling's 10 dtypes).
//
// Loading (kd.loadSync / kd.load): the header is read and checked, then the file is mapped
// (src/napi/file_map.c) and each tensor's bytes are copied from views of the mapping into its
// tensor, chunk by chunk: one copy, no intermediate read buffer, no Buffer over the whole file
// or the whole tensor, so files and tensors of any size load, at any offset in the file (See
// Note [Chunked tensor reads]). Every malformed file - truncated, header length past the
// end, invalid UTF-8/JSON, unknown dtype, a shape that does not match its byte count, offsets
// out of range or overlapping - is a KindlingError with code KD_INVALID_FILE, and nothing is
// read before the whole header is checked. Gaps between tensors and trailing bytes are accepted.
//
// Nested state dicts (objects, Maps and arrays holding tensors) flatten to dotted keys:
// {fc: {weight: W}} -> 'fc.weight'. kd.load returns a flat object {name: Tensor} in file order.
//
// Checkpoints: see saveCheckpoint below (Note [Checkpoint layout]).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const { KindlingError, typeError } = require('./errors');
const { setOwn, getOwn } = require('./own_keys');
const { checkPath, withFsErrors } = require('./files');

const DTYPE_TO_ST = {
  float64: 'F64', float32: 'F32', float16: 'F16', bfloat16: 'BF16', int64: 'I64', int32: 'I32',
  int16: 'I16', int8: 'I8', uint8: 'U8', bool: 'BOOL',
};
const ST_TO_DTYPE = Object.fromEntries(Object.entries(DTYPE_TO_ST).map(([k, v]) => [v, k]));
const ITEMSIZE = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
// Python's safetensors refuses headers above 100 MB (MAX_HEADER_SIZE = 100_000_000 in the
// safetensors crate's src/tensor.rs); so do we (and so a corrupt length cannot
// make us allocate gigabytes).
const MAX_HEADER = 100 * 1000 * 1000;
// Note [Chunked tensor reads]
// A tensor's bytes go from the file into a new CPU tensor in chunks of at most
// knobs.chunkBytes (256 MiB): each chunk is a view of the file's mapping (or, where mapping is
// unavailable, read with fs.readSync into one reused buffer) that N.writeBytes copies to its
// byte offset in the tensor. A chunk stays far below what one fs.readSync call reads (2 GiB)
// and what a Buffer holds (4 GiB on Node 20), the bytes need no alignment (a tensor may start
// at any offset of a safetensors file, and a typed array over them could not), and the host
// memory a load needs is its tensors plus one chunk. Tensors for another device are made on
// the CPU and moved with to(device). The knobs are internal: tests lower chunkBytes to run the
// chunked paths on small files, and turn `map` off to run the fs.readSync path.
const knobs = { chunkBytes: 256 * 2 ** 20, map: true };
const MAX_DIMS = 16;
const CHECKPOINT_KEY = 'kindling.checkpoint';
// saveCheckpoint refuses objects nested deeper than 64 levels; with the $map/$object wrappers a
// skeleton it wrote is at most twice that deep.
const MAX_SKELETON_DEPTH = 2 * 64 + 2;

const invalidFile = (msg) => new KindlingError(msg, 'KD_INVALID_FILE');
const invalidArg = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');

// Modules are callable (functions), optimizers and schedulers objects: anything with a
// stateDict() method is saved as its state dict.
function hasStateDict(v) {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && typeof v.stateDict === 'function';
}

// Where a function takes (obj, path) in the order of save(), an older (path, obj) call is
// told once per process.
let warnedCheckpointOrder = false;
function warnCheckpointOrder(where) {
  if (warnedCheckpointOrder) return;
  warnedCheckpointOrder = true;
  process.emitWarning(`${where}(path, state) is deprecated: pass the state first, as in kd.save(obj, path): ${where}(state, path)`,
    { type: 'DeprecationWarning', code: 'KD_DEP_CHECKPOINT_ORDER' });
}

module.exports = makeSerialization;
module.exports.knobs = knobs;

function makeSerialization(kd, Tensor, N) {
  // ---------------------------------------------------------------------------------------
  // Flattening

  function isPlainObject(v) {
    if (v === null || typeof v !== 'object') return false;
    const p = Object.getPrototypeOf(v);
    return p === Object.prototype || p === null;
  }

  // [[name, tensor], ...] from a tensor dict: nested plain objects, Maps and arrays flatten to
  // dotted keys. Values that are not tensors are an error (checkpoints handle those).
  function flattenTensors(obj, where) {
    const out = [];
    const seen = new Set();
    const walk = (v, prefix, depth) => {
      if (v instanceof Tensor) {
        if (prefix === '') throw typeError(`${where}: expected an object of tensors, got a Tensor`);
        if (seen.has(prefix)) throw invalidArg(`${where}: two tensors flatten to the same key '${prefix}'`);
        seen.add(prefix);
        out.push([prefix, v]);
        return;
      }
      if (depth > 64) throw invalidArg(`${where}: nesting deeper than 64 levels (a cycle?)`);
      let entries;
      if (hasStateDict(v)) {
        walk(v.stateDict(), prefix, depth + 1); // a module or optimizer: its state dict
        return;
      }
      if (v instanceof Map) entries = [...v.entries()].map(([k, x]) => [String(k), x]);
      else if (Array.isArray(v)) entries = v.map((x, i) => [String(i), x]);
      else if (isPlainObject(v)) {
        entries = Object.entries(v);
      } else {
        const what = v === null ? 'null' : typeof v;
        throw typeError(`${where}: '${prefix}' is ${what}, not a Tensor (use kd.saveCheckpoint for other values)`);
      }
      for (const [k, x] of entries) {
        if (k === '') throw invalidArg(`${where}: empty key under '${prefix}'`);
        walk(x, prefix === '' ? k : `${prefix}.${k}`, depth + 1);
      }
    };
    if (!hasStateDict(obj) && (obj === null || typeof obj !== 'object' || obj instanceof Tensor)) {
      throw typeError(`${where}: expected an object (or Map) of tensors, got ${obj instanceof Tensor ? 'a Tensor' : obj === null ? 'null' : typeof obj}`);
    }
    walk(obj, '', 0);
    for (const [name] of out) {
      if (name === '__metadata__') throw invalidArg(`${where}: '__metadata__' is reserved for the file's metadata`);
    }
    return out;
  }

  function checkMetadata(metadata, where) {
    if (metadata === undefined || metadata === null) return null;
    if (typeof metadata !== 'object' || Array.isArray(metadata)) {
      throw typeError(`${where}: metadata must be an object of strings`);
    }
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw typeError(`${where}: metadata values must be strings ('${k}' is ${typeof v})`);
    }
    return metadata;
  }

  // ---------------------------------------------------------------------------------------
  // Writing

  // The header bytes (length prefix included) and the raw bytes of each tensor, in order.
  function encode(tensors, metadata, where) {
    const entries = flattenTensors(tensors, where);
    const meta = checkMetadata(metadata, where);
    if (os.endianness() !== 'LE') throw new KindlingError(`${where}: big-endian hosts are not supported`, 'KD_NOT_SUPPORTED');
    const header = {}; // tensor names are keys: See Note [Keys from files]
    if (meta) header.__metadata__ = meta;
    const chunks = [];
    let offset = 0;
    for (const [name, t] of entries) {
      if (t.isDisposed) throw invalidArg(`${where}: tensor '${name}' was disposed`);
      const code = DTYPE_TO_ST[t.dtype];
      // N.toTypedArray: a row-major host copy (contiguous, on the CPU) of the raw elements.
      const raw = N.toTypedArray(t._h);
      const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
      setOwn(header, name, { dtype: code, shape: t.shape, data_offsets: [offset, offset + bytes.length] });
      offset += bytes.length;
      chunks.push(bytes);
    }
    let json = Buffer.from(JSON.stringify(header), 'utf8');
    const pad = (8 - (json.length % 8)) % 8;
    if (pad) json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
    const prefix = Buffer.alloc(8);
    prefix.writeBigUInt64LE(BigInt(json.length));
    return { head: Buffer.concat([prefix, json]), chunks, size: 8 + json.length + offset };
  }

  /** The safetensors bytes of a tensor dict, as one Buffer. */
  function serialize(tensors, options = {}) {
    const { head, chunks, size } = encode(tensors, options && options.metadata, 'serialize()');
    return Buffer.concat([head, ...chunks], size);
  }

  function writeAll(fd, buf) {
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
  }

  /** Writes a tensor dict (or nested state dict) to `path` in the safetensors format. */
  function saveSync(tensors, path, options = {}) {
    checkPath(path, 'saveSync()');
    const { head, chunks } = encode(tensors, options && options.metadata, 'saveSync()');
    withFsErrors('saveSync()', () => {
      const fd = fs.openSync(path, 'w');
      try {
        writeAll(fd, head);
        for (const c of chunks) writeAll(fd, c);
      } finally {
        fs.closeSync(fd);
      }
    });
  }

  /** saveSync, with the file written asynchronously (the tensors are read on the calling thread). */
  async function save(tensors, path, options = {}) {
    checkPath(path, 'save()');
    const { head, chunks } = encode(tensors, options && options.metadata, 'save()');
    await withFsErrors('save()', async () => {
      const fh = await fs.promises.open(path, 'w');
      try {
        await fh.writev([head, ...chunks]);
      } finally {
        await fh.close();
      }
    });
  }

  // ---------------------------------------------------------------------------------------
  // Reading

  /**
   * Parses and checks the safetensors header of a source (see fileSource / bytesSource): only
   * the header's bytes are read. Returns {metadata, entries: [{name, dtype, shape, begin, end}],
   * dataStart}; entries are in header order. Throws KD_INVALID_FILE for anything malformed.
   */
  function parseHeader(src) {
    const size = src.size;
    if (size < 8) throw invalidFile(`invalid safetensors file: ${size} bytes, too short for the 8-byte header length`);
    const n64 = src.read(0, 8).readBigUInt64LE(0);
    // the limit first, as the safetensors crate checks it (MAX_HEADER_SIZE, HeaderTooLarge)
    if (n64 > BigInt(MAX_HEADER)) throw invalidFile(`invalid safetensors file: header of ${n64} bytes is larger than the 100 MB limit`);
    if (n64 > BigInt(size - 8)) {
      throw invalidFile(`invalid safetensors file: header length ${n64} runs past the end of the file (${size} bytes)`);
    }
    const n = Number(n64);
    if (n < 2) throw invalidFile(`invalid safetensors file: header of ${n} bytes cannot hold a JSON object`);
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(src.read(8, n));
    } catch {
      throw invalidFile('invalid safetensors file: the header is not valid UTF-8');
    }
    let header;
    try {
      header = JSON.parse(text);
    } catch (e) {
      throw invalidFile(`invalid safetensors file: the header is not valid JSON (${e.message})`);
    }
    if (header === null || typeof header !== 'object' || Array.isArray(header)) {
      throw invalidFile('invalid safetensors file: the header is not a JSON object');
    }
    const dataStart = 8 + n;
    const dataLen = size - dataStart;
    let metadata = {};
    const entries = [];
    for (const [name, info] of Object.entries(header)) {
      if (name === '__metadata__') {
        if (info === null || typeof info !== 'object' || Array.isArray(info)) {
          throw invalidFile('invalid safetensors file: __metadata__ must be an object of strings');
        }
        for (const [k, v] of Object.entries(info)) {
          if (typeof v !== 'string') throw invalidFile(`invalid safetensors file: __metadata__ value '${k}' is not a string`);
        }
        metadata = info;
        continue;
      }
      const bad = (msg) => invalidFile(`invalid safetensors file: tensor '${name}': ${msg}`);
      if (info === null || typeof info !== 'object' || Array.isArray(info)) throw bad('entry is not an object');
      const code = info.dtype;
      if (typeof code !== 'string') throw bad('missing dtype');
      if (!Object.prototype.hasOwnProperty.call(ITEMSIZE, code)) {
        throw bad(`unsupported dtype '${code}' (kindling reads ${Object.keys(ITEMSIZE).join(', ')})`);
      }
      const shape = info.shape;
      if (!Array.isArray(shape)) throw bad('shape must be an array');
      if (shape.length > MAX_DIMS) throw bad(`shape has ${shape.length} dims (at most ${MAX_DIMS})`);
      let numel = 1;
      for (const d of shape) {
        if (!Number.isSafeInteger(d) || d < 0) throw bad(`shape ${JSON.stringify(shape)} must hold non-negative integers`);
        numel *= d;
      }
      const offs = info.data_offsets;
      if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((x) => Number.isSafeInteger(x) && x >= 0)) {
        throw bad('data_offsets must be [begin, end] with non-negative integers');
      }
      const [begin, end] = offs;
      if (begin > end) throw bad(`data_offsets [${begin}, ${end}] end before they begin`);
      if (end > dataLen) {
        throw bad(`data_offsets [${begin}, ${end}] run past the end of the data (${dataLen} bytes)`);
      }
      const need = numel * ITEMSIZE[code];
      if (!Number.isSafeInteger(need) || need !== end - begin) {
        throw bad(`shape ${JSON.stringify(shape)} with dtype ${code} needs ${need} bytes but data_offsets span ${end - begin}`);
      }
      entries.push({ name, code, dtype: ST_TO_DTYPE[code], shape, begin, end });
    }
    const byStart = entries.filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin);
    for (let i = 1; i < byStart.length; i++) {
      if (byStart[i].begin < byStart[i - 1].end) {
        throw invalidFile(`invalid safetensors file: tensors '${byStart[i - 1].name}' and '${byStart[i].name}' overlap`);
      }
    }
    return { metadata, entries, dataStart };
  }

  // The tensor of one checked entry, its bytes [begin, end) of the source copied in chunks (See
  // Note [Chunked tensor reads]), on `device`.
  function entryTensor(src, e, begin, end, device) {
    const t = kd.empty(e.shape, { dtype: e.dtype });
    try {
      for (let at = begin; at < end; at += knobs.chunkBytes) {
        const range = src.bytes(at, Math.min(end, at + knobs.chunkBytes));
        try {
          N.writeBytes(t._h, at - begin, range.view);
        } finally {
          range.release();
        }
      }
      if (device === 'cpu') return t;
      const moved = t.to({ device });
      if (moved !== t) t.dispose();
      return moved;
    } catch (err) {
      t.dispose();
      throw err;
    }
  }

  function decode(src, device, where) {
    if (os.endianness() !== 'LE') throw new KindlingError(`${where}: big-endian hosts are not supported`, 'KD_NOT_SUPPORTED');
    const { metadata, entries, dataStart } = parseHeader(src);
    const out = {};
    const made = [];
    try {
      for (const e of entries) {
        const t = entryTensor(src, e, dataStart + e.begin, dataStart + e.end, device);
        made.push(t);
        setOwn(out, e.name, t); // See Note [Keys from files]
      }
    } catch (err) {
      for (const t of made) t.dispose();
      throw err;
    }
    return { tensors: out, metadata };
  }

  function checkLoadOptions(options, where) {
    if (options === undefined || options === null) return 'cpu';
    if (typeof options !== 'object' || Array.isArray(options)) throw typeError(`${where}: options must be an object`);
    for (const k of Object.keys(options)) {
      if (k !== 'device') throw typeError(`${where}: unexpected option '${k}' (expected device)`);
    }
    const d = options.device;
    if (d === undefined || d === null) return 'cpu';
    if (typeof d !== 'string') throw typeError(`${where}: device must be a string such as 'cpu' or 'cuda:0'`);
    return d;
  }

  // A source is what decode reads from: {size, read(offset, length) -> Buffer (the header),
  // bytes(begin, end) -> {view: Uint8Array, release()} (a tensor's bytes)}.

  // bytes held in memory (deserialize)
  function bytesSource(buf) {
    return {
      size: buf.length,
      read: (offset, length) => buf.subarray(offset, offset + length),
      bytes: (begin, end) => ({ view: buf.subarray(begin, end), release() {} }),
    };
  }

  // An open file (See Note [No Buffer over the whole file] in src/napi/file_map.c): the header
  // is read with fs.readSync; tensors' bytes are views of one mapping of the file (populate:
  // faulted in up front), or, where mapping is unavailable, read from the file into one buffer
  // reused from chunk to chunk (See Note [Chunked tensor reads]).
  function fileSource(fd, size, { map: useMap, populate }) {
    let map = null;
    if (useMap && size > 0) {
      try {
        map = N.mapFile(fd, size);
      } catch (e) {
        if (!e || e.code !== 'KD_NOT_SUPPORTED') throw e;
      }
    }
    // bytes [offset, offset + length) of the file into b (from its start), one chunk per call
    const readInto = (b, offset, length) => {
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, b, got, Math.min(length - got, knobs.chunkBytes), offset + got);
        if (n === 0) throw invalidFile(`invalid safetensors file: the file ended at ${offset + got} bytes while being read`);
        got += n;
      }
      return b;
    };
    const read = (offset, length) => readInto(Buffer.alloc(length), offset, length);
    let scratch = null; // the reused buffer of the read path
    const bytes = (begin, end) => {
      if (map !== null && end > begin) {
        try {
          const ab = N.mapView(map, begin, end, populate);
          return { view: new Uint8Array(ab), release: () => N.releaseView(ab) };
        } catch (e) {
          if (!e || e.code !== 'KD_NOT_SUPPORTED') throw e;
          N.unmapFile(map);
          map = null;
        }
      }
      if (scratch === null || scratch.length < end - begin) scratch = Buffer.alloc(end - begin);
      return { view: readInto(scratch, begin, end - begin).subarray(0, end - begin), release() {} };
    };
    const close = () => {
      if (map !== null) N.unmapFile(map);
      map = null;
    };
    return { size, read, bytes, close };
  }

  // Opens the file and runs fn(source), then closes both; the file system's errors are
  // KD_IO_ERROR from `where`.
  function withFile(where, path, fn, options = { map: knobs.map, populate: true }) {
    return withFsErrors(where, () => {
      const fd = fs.openSync(path, 'r');
      let src = null;
      try {
        src = fileSource(fd, fs.fstatSync(fd).size, options);
        return fn(src);
      } finally {
        if (src) src.close();
        fs.closeSync(fd);
      }
    });
  }

  /** The tensors of a safetensors file, as {name: Tensor} in file order, on options.device. */
  function loadSync(path, options) {
    const device = checkLoadOptions(options, 'loadSync()');
    checkPath(path, 'loadSync()');
    return withFile('loadSync()', path, (src) => decode(src, device, 'loadSync()').tensors);
  }

  /** loadSync as a Promise (the file is checked for access asynchronously first). */
  async function load(path, options) {
    const device = checkLoadOptions(options, 'load()');
    checkPath(path, 'load()');
    await withFsErrors('load()', () => fs.promises.access(path, fs.constants.R_OK));
    return withFile('load()', path, (src) => decode(src, device, 'load()').tensors);
  }

  /** The __metadata__ of a safetensors file ({} when it has none); reads only the header. */
  function loadMetadata(path) {
    checkPath(path, 'loadMetadata()');
    return withFile('loadMetadata()', path, (src) => parseHeader(src).metadata, { map: false });
  }

  /** The tensors held in safetensors bytes (a Buffer or Uint8Array). */
  function deserialize(bytes, options) {
    const device = checkLoadOptions(options, 'deserialize()');
    if (!(bytes instanceof Uint8Array)) throw typeError('deserialize(): expected a Buffer or Uint8Array');
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return decode(bytesSource(buf), device, 'deserialize()').tensors;
  }

  // ---------------------------------------------------------------------------------------
  // Checkpoints
  //
  // Note [Checkpoint layout]
  // saveCheckpoint({model, optimizer, epoch, ...}, path) writes one safetensors file:
  //   - every tensor anywhere in the object (after calling .stateDict() on values that have
  //     one: modules, optimizers, schedulers) is stored under its dotted path, e.g.
  //     'model.fc.weight', 'optimizer.state.0.exp_avg';
  //   - everything else is kept as JSON in __metadata__['kindling.checkpoint']: the object's
  //     whole structure, where each tensor is replaced by {"$tensor": "<key>"}. Numbers JSON
  //     cannot hold are {"$number": "NaN" | "Infinity" | "-Infinity"}, BigInts {"$bigint": "..."},
  //     undefined {"$undefined": true}, Maps {"$map": [[key, value], ...]}; a plain object that
  //     itself has a key starting with '$' is written as {"$object": {...}}.
  // loadCheckpoint(path, {device}) rebuilds that object with the tensors in place (state dicts
  // come back as plain objects: pass them to model.loadStateDict / optimizer.loadStateDict).
  // Python can read the tensors with safetensors and the rest with json.loads(metadata[...]).

  function toSkeleton(value, path, tensors, depth) {
    if (depth > 64) throw invalidArg('saveCheckpoint(): nesting deeper than 64 levels (a cycle?)');
    if (value instanceof Tensor) {
      const key = path === '' ? '_' : path;
      if (tensors.has(key)) throw invalidArg(`saveCheckpoint(): two tensors under the key '${key}'`);
      tensors.set(key, value);
      return { $tensor: key };
    }
    if (value === undefined) return { $undefined: true };
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
    if (typeof value === 'number') return Number.isFinite(value) ? value : { $number: String(value) };
    if (typeof value === 'bigint') return { $bigint: value.toString() };
    if (hasStateDict(value)) return toSkeleton(value.stateDict(), path, tensors, depth + 1);
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw typeError(`saveCheckpoint(): '${path}' is a ${typeof value}, which cannot be saved`);
    }
    const sub = (k) => (path === '' ? String(k) : `${path}.${k}`);
    if (Array.isArray(value)) return value.map((x, i) => toSkeleton(x, sub(i), tensors, depth + 1));
    if (value instanceof Map) {
      return { $map: [...value.entries()].map(([k, x]) => [k, toSkeleton(x, sub(k), tensors, depth + 1)]) };
    }
    if (ArrayBuffer.isView(value)) {
      throw typeError(`saveCheckpoint(): '${path}' is a typed array; wrap it with kd.tensor() to save it`);
    }
    const out = {};
    let dollar = false;
    for (const [k, x] of Object.entries(value)) {
      if (k.startsWith('$')) dollar = true;
      setOwn(out, k, toSkeleton(x, sub(k), tensors, depth + 1));
    }
    return dollar ? { $object: out } : out;
  }

  // `used` collects the tensors the rebuilt object holds. The skeleton comes from a file: every
  // node is checked (a $bigint that is not an integer, a $tensor that is not a string, nesting
  // past what saveCheckpoint writes) so that a corrupt one is KD_INVALID_FILE, never a
  // SyntaxError from BigInt() or a RangeError from the stack.
  function fromSkeleton(node, tensors, used, depth = 0) {
    if (node === null || typeof node !== 'object') return node;
    if (depth > MAX_SKELETON_DEPTH) throw invalidFile(`invalid checkpoint: nesting deeper than ${MAX_SKELETON_DEPTH} levels`);
    const sub = (x) => fromSkeleton(x, tensors, used, depth + 1);
    if (Array.isArray(node)) return node.map(sub);
    if ('$tensor' in node) {
      if (typeof node.$tensor !== 'string') throw invalidFile('invalid checkpoint: a $tensor key is not a string');
      const t = getOwn(tensors, node.$tensor); // See Note [Keys from files]
      if (!(t instanceof Tensor)) throw invalidFile(`invalid checkpoint: tensor '${node.$tensor}' is missing from the file`);
      used.add(t);
      return t;
    }
    if ('$number' in node) {
      if (!['NaN', 'Infinity', '-Infinity'].includes(node.$number)) throw invalidFile('invalid checkpoint: a $number is not NaN, Infinity or -Infinity');
      return Number(node.$number);
    }
    if ('$bigint' in node) {
      if (typeof node.$bigint !== 'string' || !/^-?\d+$/.test(node.$bigint)) throw invalidFile('invalid checkpoint: a $bigint is not an integer string');
      return BigInt(node.$bigint);
    }
    if ('$undefined' in node) return undefined;
    if ('$map' in node) {
      if (!Array.isArray(node.$map)) throw invalidFile('invalid checkpoint: a $map is not an array of pairs');
      return new Map(node.$map.map((pair) => {
        if (!Array.isArray(pair) || pair.length !== 2) throw invalidFile('invalid checkpoint: a $map is not an array of pairs');
        return [pair[0], sub(pair[1])];
      }));
    }
    const src = '$object' in node ? node.$object : node;
    if (src === null || typeof src !== 'object' || Array.isArray(src)) throw invalidFile('invalid checkpoint: an $object is not an object');
    const out = {};
    for (const [k, x] of Object.entries(src)) setOwn(out, k, sub(x));
    return out;
  }

  function checkpointParts(state, where) {
    if (!hasStateDict(state) && (state === null || typeof state !== 'object' || Array.isArray(state) || state instanceof Tensor)) {
      throw typeError(`${where}: expected an object such as {model, optimizer, epoch}`);
    }
    const tensors = new Map();
    const skeleton = toSkeleton(state, '', tensors, 0);
    const metadata = { [CHECKPOINT_KEY]: JSON.stringify({ format: 1, state: skeleton }) };
    return { tensors, metadata };
  }

  function restoreCheckpoint(loaded, metadata) {
    const text = metadata[CHECKPOINT_KEY];
    if (typeof text !== 'string') throw invalidFile(`invalid checkpoint: no '${CHECKPOINT_KEY}' metadata (a plain safetensors file? use kd.load)`);
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw invalidFile(`invalid checkpoint: the '${CHECKPOINT_KEY}' metadata is not valid JSON (${e.message})`);
    }
    if (!parsed || parsed.format !== 1) throw invalidFile('invalid checkpoint: unknown checkpoint format');
    const used = new Set();
    const state = fromSkeleton(parsed.state, loaded, used);
    return { state, used };
  }

  const isPath = (v) => typeof v === 'string' || v instanceof URL || Buffer.isBuffer(v);
  // (state, path) as save() takes them; the older (path, state) still works, with a warning.
  function checkpointArgs(a, b, where) {
    if (isPath(a) && !isPath(b)) {
      warnCheckpointOrder(where);
      return [b, a];
    }
    return [a, b];
  }

  /** Writes {model, optimizer, epoch, ...} to one safetensors file (see Note [Checkpoint layout]). */
  function saveCheckpointSync(state, path) {
    [state, path] = checkpointArgs(state, path, 'saveCheckpointSync');
    checkPath(path, 'saveCheckpointSync()');
    const { tensors, metadata } = checkpointParts(state, 'saveCheckpointSync()');
    saveSync(tensors, path, { metadata });
  }
  async function saveCheckpoint(state, path) {
    [state, path] = checkpointArgs(state, path, 'saveCheckpoint');
    checkPath(path, 'saveCheckpoint()');
    const { tensors, metadata } = checkpointParts(state, 'saveCheckpoint()');
    await save(tensors, path, { metadata });
  }
  /** The object saveCheckpoint wrote, with its tensors on options.device. */
  function loadCheckpointSync(path, options) {
    const device = checkLoadOptions(options, 'loadCheckpointSync()');
    checkPath(path, 'loadCheckpointSync()');
    return withFile('loadCheckpointSync()', path, (src) => {
      const { tensors, metadata } = decode(src, device, 'loadCheckpointSync()');
      let restored;
      try {
        restored = restoreCheckpoint(tensors, metadata);
      } catch (err) {
        for (const t of Object.values(tensors)) t.dispose();
        throw err;
      }
      // tensors in the file that the saved object does not hold would only wait for the GC
      for (const t of Object.values(tensors)) if (!restored.used.has(t)) t.dispose();
      return restored.state;
    });
  }
  async function loadCheckpoint(path, options) {
    checkLoadOptions(options, 'loadCheckpoint()');
    checkPath(path, 'loadCheckpoint()');
    await withFsErrors('loadCheckpoint()', () => fs.promises.access(path, fs.constants.R_OK));
    return loadCheckpointSync(path, options);
  }

  kd.save = save;
  kd.saveSync = saveSync;
  kd.load = load;
  kd.loadSync = loadSync;
  kd.saveCheckpoint = saveCheckpoint;
  kd.saveCheckpointSync = saveCheckpointSync;
  kd.loadCheckpoint = loadCheckpoint;
  kd.loadCheckpointSync = loadCheckpointSync;
  kd.safetensors = Object.freeze({ serialize, deserialize, loadMetadata, flatten: (o) => Object.fromEntries(flattenTensors(o, 'flatten()')) });
}
