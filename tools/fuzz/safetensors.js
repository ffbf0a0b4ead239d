// fuzz/safetensors.js - the safetensors target of tools/fuzz.js: mutants of valid files (plain
// tensor dicts of every dtype, 0-d and empty tensors, metadata, and a checkpoint) loaded through
// every reader (kd.safetensors.deserialize, kd.loadSync, kd.load, kd.loadCheckpointSync,
// kd.loadCheckpoint, kd.safetensors.loadMetadata). A mutant is plain data - the base file and a
// list of mutations - so fast-check shrinks it and a replay rebuilds the same bytes:
//   headerLen   the 8-byte length field set to a value (0, off by one, past the end, 2^64 - 1, ...)
//   truncate    the file cut at a fraction of its length
//   flip        one byte XORed
//   splice      bytes inserted into the header (invalid UTF-8 among them)
//   edit        the header's JSON changed structurally (a field of an entry, a whole entry, a new
//               entry, the metadata, a duplicated key, a renamed entry, the checkpoint skeleton)
//               and written back with its length fixed (or, with keepLength, not)
//   append      bytes added at the end
// The promise checked for each reader: it returns, or throws a KindlingError with a KD_* code
// (not KD_INTERNAL); it never crashes or hangs (the pool sees that), and the process's resident
// memory grows by no more than the file justifies (RSS_SLACK plus a few times the file's size).
'use strict';
const fc = require('fast-check');
const { badException, noteReturn, noteThrow, notePeak } = require('./promise');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RSS_SLACK = 64 * 1024 * 1024;
const RSS_PER_FILE_BYTE = 8;

// ---- arbitraries (the parent) -----------------------------------------------------------------

const BASES = 4;
const hostileJson = fc.constantFrom(
  null, true, 0, -1, 1.5, '', 'F32', 'x', [], [0], [-1, 4], [4, 0], [0, 2 ** 53], [0.5, 4.5], ['0', '4'], [0, 4, 8],
  [2 ** 62, 2 ** 62], [0, 2 ** 62, 2 ** 62], [2 ** 31, 2 ** 31, 4], [1e308], [-0], {}, { dtype: 'F32' },
  'F8_E4M3', 'F8_E5M2', 'C64', 'U16', 'U32', 'U64', 'F32 ', 'f32', 'BOOL', 'U8', 'I64', '__proto__',
  Array.from({ length: 17 }, () => 1), Array.from({ length: 64 }, () => 0),
);
// Text spliced into the JSON where a value goes: numbers JSON.parse reads as non-integers or
// Infinity, and invalid UTF-8 inside a string.
const rawValue = fc.constantFrom('1e400', '-1e400', '18446744073709551616', '9007199254740993', '1e-400', '"\\ud800"');
const checkpointText = fc.constantFrom(
  '{"format":1,"state":{"$bigint":"not a number"}}', '{"format":1,"state":{"$map":5}}', '{"format":1,"state":{"$map":[[1]]}}',
  '{"format":1,"state":{"$tensor":{}}}', '{"format":1,"state":{"$tensor":"__proto__"}}', '{"format":1,"state":{"$number":"abc"}}',
  '{"format":1,"state":{"$object":5}}', '{"format":1,"state":{"$object":null}}', '{"format":1,"state":{"$undefined":1}}',
  '{"format":1}', '{"format":2,"state":{}}', '[]', 'null', '{"format":1,"state":{"$bigint":{}}}',
  '{"format":1,"state":{"a":{"$tensor":"w"},"b":{"$tensor":"w"}}}', '{"format":1,"state":{"toString":{"$tensor":"constructor"}}}',
  `{"format":1,"state":${'['.repeat(20000)}${']'.repeat(20000)}}`, `{"format":1,"state":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
);
const edit = fc.oneof(
  fc.record({ edit: fc.constant('field'), entry: fc.nat(7), field: fc.constantFrom('dtype', 'shape', 'data_offsets', 'extra'), value: hostileJson }),
  fc.record({ edit: fc.constant('raw'), entry: fc.nat(7), field: fc.constantFrom('shape', 'data_offsets'), value: rawValue, at: fc.nat(3) }),
  fc.record({ edit: fc.constant('delete'), entry: fc.nat(7), field: fc.constantFrom('dtype', 'shape', 'data_offsets', null) }),
  fc.record({ edit: fc.constant('entry'), entry: fc.nat(7), value: hostileJson }),
  fc.record({ edit: fc.constant('add'), name: fc.constantFrom('n', '__proto__', 'constructor', '', 'a.b', '\u0000'), value: fc.record({ dtype: hostileJson, shape: hostileJson, data_offsets: hostileJson }) }),
  fc.record({ edit: fc.constant('rename'), entry: fc.nat(7), name: fc.constantFrom('__proto__', 'constructor', 'toString', '', '__metadata__', 'hasOwnProperty') }),
  fc.record({ edit: fc.constant('metadata'), value: fc.oneof(hostileJson, fc.record({ k: hostileJson })) }),
  fc.record({ edit: fc.constant('duplicate'), entry: fc.nat(7) }),
  fc.record({ edit: fc.constant('checkpoint'), text: checkpointText }),
);
const mutation = fc.oneof(
  fc.record({ op: fc.constant('headerLen'), value: fc.oneof(fc.constantFrom(0n, 1n, 2n, 7n, 2n ** 63n, 2n ** 64n - 1n, 100000001n, 100000000n),
    fc.record({ rel: fc.integer({ min: -9, max: 9 }) })) }),
  fc.record({ op: fc.constant('truncate'), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant('flip'), at: fc.double({ min: 0, max: 1, noNaN: true }), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ op: fc.constant('splice'), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.array(fc.constantFrom(0x00, 0x22, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d, 0x80, 0xc0, 0xed, 0xff, 0x31), { minLength: 1, maxLength: 4 }) }),
  fc.record({ op: fc.constant('edit'), what: edit, keepLength: fc.boolean() }),
  fc.record({ op: fc.constant('append'), n: fc.integer({ min: 1, max: 64 }) }),
);
const mutantArb = fc.record({
  base: fc.nat(BASES - 1),
  mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
});

// ---- the bytes of a mutant (the child) --------------------------------------------------------

let tmpDir = null;
const basesCache = [];
function baseFiles(kd) {
  if (basesCache.length) return basesCache;
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-fuzz-st-'));
  process.on('exit', () => fs.rmSync(tmpDir, { recursive: true, force: true }));
  const ser = kd.safetensors.serialize;
  kd.tidy(() => {
    basesCache.push(ser({
      a: kd.arange(6, { dtype: 'float32' }).reshape([2, 3]), b: kd.arange(4, { dtype: 'int64' }), c: kd.tensor(true),
      d: kd.zeros([0, 3], { dtype: 'float16' }), e: kd.ones([3], { dtype: 'bfloat16' }), f: kd.ones([2], { dtype: 'int8' }),
    }, { metadata: { format: 'pt', k: 'v' } }));
    const file = path.join(tmpDir, 'checkpoint.safetensors');
    kd.saveCheckpointSync({ w: kd.ones([2, 2]), step: 3, opt: { lr: NaN, big: 5n, m: new Map([[1, kd.zeros([1], { dtype: 'float64' })]]) } }, file);
    basesCache.push(fs.readFileSync(file));
    basesCache.push(ser({}));
    basesCache.push(ser({ u: kd.arange(5, { dtype: 'uint8' }), i: kd.arange(3, { dtype: 'int32' }), s: kd.ones([1, 1, 2], { dtype: 'int16' }), g: kd.ones([2], { dtype: 'float64' }) }));
  });
  return basesCache;
}

const at = (frac, n) => Math.min(n, Math.floor(frac * n));

function applyEdit(header, e) {
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const name = names.length ? names[e.entry % names.length] : null;
  let extraText = null;
  switch (e.edit) {
    case 'field': if (name !== null && header[name] && typeof header[name] === 'object') header[name][e.field] = e.value; break;
    case 'raw': if (name !== null && header[name] && typeof header[name] === 'object') header[name][e.field] = `@@RAW${e.at}@@`; break;
    case 'delete': if (name !== null) { if (e.field && header[name] && typeof header[name] === 'object') delete header[name][e.field]; else delete header[name]; } break;
    case 'entry': if (name !== null) header[name] = e.value; break;
    case 'add': Object.defineProperty(header, e.name, { value: e.value, enumerable: true, writable: true, configurable: true }); break;
    case 'rename': if (name !== null) {
      const v = header[name];
      delete header[name];
      Object.defineProperty(header, e.name, { value: v, enumerable: true, writable: true, configurable: true });
    } break;
    case 'metadata': header.__metadata__ = e.value; break;
    case 'duplicate': if (name !== null) extraText = `${JSON.stringify(name)}:${JSON.stringify(header[name])}`; break;
    case 'checkpoint': header.__metadata__ = { ...(header.__metadata__ || {}), 'kindling.checkpoint': e.text }; break;
    default: throw new Error(`unknown edit ${e.edit}`);
  }
  let text = JSON.stringify(header);
  if (e.edit === 'raw') text = text.replace(`"@@RAW${e.at}@@"`, `[${Array.from({ length: e.at + 1 }, () => e.value).join(',')}]`);
  if (extraText) text = `{${extraText},${text.slice(1)}`;
  return text;
}

/** The bytes of a mutant (see the top of the file). */
function mutantBytes(kd, m) {
  let buf = Buffer.from(baseFiles(kd)[m.base % BASES]);
  for (const mu of m.mutations) {
    const hlen = buf.length >= 8 ? Number(buf.readBigUInt64LE(0)) : 0;
    switch (mu.op) {
      case 'headerLen': {
        if (buf.length < 8) break;
        let v = typeof mu.value === 'bigint' ? mu.value : BigInt(Math.max(0, hlen + mu.value.rel));
        buf = Buffer.from(buf);
        buf.writeBigUInt64LE(v & (2n ** 64n - 1n), 0);
        break;
      }
      case 'truncate': buf = buf.subarray(0, at(mu.at, buf.length)); break;
      case 'flip': if (buf.length) { buf = Buffer.from(buf); const i = at(mu.at, buf.length - 1); buf[i] ^= mu.xor; } break;
      case 'splice': {
        const end = Math.min(buf.length, 8 + hlen);
        const i = Math.max(Math.min(8, buf.length), at(mu.at, end));
        buf = Buffer.concat([buf.subarray(0, i), Buffer.from(mu.bytes), buf.subarray(i)]);
        break;
      }
      case 'edit': {
        if (buf.length < 8 || 8 + hlen > buf.length) break;
        let header;
        try { header = JSON.parse(buf.subarray(8, 8 + hlen).toString('utf8')); } catch { break; }
        if (header === null || typeof header !== 'object' || Array.isArray(header)) break;
        const json = Buffer.from(applyEdit(header, mu.what), 'utf8');
        const prefix = Buffer.alloc(8);
        prefix.writeBigUInt64LE(BigInt(mu.keepLength ? hlen : json.length));
        buf = Buffer.concat([prefix, json, buf.subarray(8 + hlen)]);
        break;
      }
      case 'append': buf = Buffer.concat([buf, Buffer.alloc(mu.n, 0xab)]); break;
      default: throw new Error(`unknown mutation ${mu.op}`);
    }
  }
  return buf;
}

// ---- running a mutant (the child) ----------------------------------------------------------

function disposeAll(kd, v, depth = 0) {
  if (depth > 100 || v === null || typeof v !== 'object') return;
  if (v instanceof kd.Tensor) { v.dispose(); return; }
  const vals = v instanceof Map ? [...v.values()] : Object.values(v);
  for (const x of vals) disposeAll(kd, x, depth + 1);
}

const READERS = {
  deserialize: (kd, buf) => kd.safetensors.deserialize(buf),
  loadSync: (kd, buf, file) => kd.loadSync(file),
  load: (kd, buf, file) => kd.load(file),
  loadCheckpointSync: (kd, buf, file) => kd.loadCheckpointSync(file),
  loadCheckpoint: (kd, buf, file) => kd.loadCheckpoint(file),
  loadMetadata: (kd, buf, file) => kd.safetensors.loadMetadata(file),
};

let counter = 0;
async function runMutant(kd, m) {
  const buf = mutantBytes(kd, m);
  const file = path.join(tmpDir, `m${process.pid}-${counter++}.safetensors`);
  fs.writeFileSync(file, buf);
  try {
    for (const [reader, read] of Object.entries(READERS)) {
      const live0 = kd.memory().liveTensors;
      const rss0 = process.memoryUsage.rss();
      let peak = rss0;
      try {
        const r = await read(kd, buf, file);
        noteReturn();
        peak = Math.max(peak, process.memoryUsage.rss());
        disposeAll(kd, r);
      } catch (e) {
        noteThrow(e);
        const bad = badException(kd, e);
        if (bad) return { kind: 'exception', reader, size: buf.length, ...bad };
      }
      peak = Math.max(peak, process.memoryUsage.rss());
      const grew = peak - rss0;
      notePeak('rss growth of a load (bytes)', grew);
      notePeak('rss growth of a load beyond 8x the file (bytes)', grew - RSS_PER_FILE_BYTE * buf.length);
      if (grew > RSS_SLACK + RSS_PER_FILE_BYTE * buf.length) {
        return { kind: 'memory', reader, size: buf.length, message: `resident memory grew by ${grew} bytes loading a ${buf.length}-byte file` };
      }
      if (kd.memory().liveTensors !== live0) return { kind: 'leak', reader, message: `${kd.memory().liveTensors - live0} tensors left alive` };
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
  return null;
}

module.exports = { mutantArb, mutantBytes, runCase: runMutant, READERS };
