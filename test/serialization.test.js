// serialization.test.js - kd.save/kd.load (safetensors) and checkpoints: round trips for every
// dtype, 0-d/empty/non-contiguous tensors, the fixture written in Python (tools/safetensors_check.py)
// and the one kindling wrote (checked by Python, result committed), every malformed-file case,
// and a fuzz over truncations and flipped header bytes.
//   KD_UPDATE_FIXTURES=1 npx mocha test/serialization.test.js   rewrites from_kindling.safetensors
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const kd = require('..');
const { collectGarbage } = require('./helpers');

const FIX = path.join(__dirname, 'fixtures', 'safetensors');
const expected = JSON.parse(fs.readFileSync(path.join(FIX, 'expected.json'), 'utf8'));
const ST_DTYPE = {
  F64: 'float64', F32: 'float32', F16: 'float16', BF16: 'bfloat16', I64: 'int64', I32: 'int32',
  I16: 'int16', I8: 'int8', U8: 'uint8', BOOL: 'bool',
};

let tmp;
before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-st-')); });
after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });
const tmpFile = (name) => path.join(tmp, name);

const SPECIAL = { inf: Infinity, '-inf': -Infinity, nan: NaN };
const num = (v) => (typeof v === 'string' ? (v in SPECIAL ? SPECIAL[v] : Number(v)) : v);

// The tensors of expected.json, built in kindling (non-contiguous where torch's were).
function expectedTensors() {
  const out = {};
  for (const [name, e] of Object.entries(expected.tensors)) {
    const dtype = ST_DTYPE[e.dtype];
    let t;
    if (dtype === 'int64') t = kd.tensor(BigInt64Array.from(e.values.map(BigInt)));
    else if (dtype === 'bool') t = kd.tensor(e.values, { dtype: 'bool' });
    else if (e.values.length === 0) t = kd.zeros([0], { dtype });
    else t = kd.tensor(Float64Array.from(e.values.map(num))).to(dtype);
    t = t.reshape(e.shape);
    // torch's was a transposed view: the same values with column-major strides
    out[name] = e.contiguous ? t : t.t().contiguous().t();
  }
  return out;
}

function assertMatchesExpected(tensors) {
  assert.deepEqual(Object.keys(tensors).sort(), Object.keys(expected.tensors).sort());
  for (const [name, e] of Object.entries(expected.tensors)) {
    const t = tensors[name];
    assert.equal(t.dtype, ST_DTYPE[e.dtype], name);
    assert.deepEqual(t.shape, e.shape, name);
    const d = t.dataSync();
    if (e.dtype === 'I64') assert.deepEqual(Array.from(d, String), e.values, name);
    else if (e.dtype === 'BOOL') assert.deepEqual(Array.from(d, (x) => x !== 0), e.values, name);
    else assert.deepEqual(Array.from(d), e.values.map(num), name);
  }
}

function assertSameTensor(a, b, what) {
  assert.equal(a.dtype, b.dtype, what);
  assert.deepEqual(a.shape, b.shape, what);
  assert.deepEqual(Array.from(a.dataSync()), Array.from(b.dataSync()), what);
}

describe('serialization: safetensors', () => {
  describe('round trips', () => {
    for (const dtype of kd.dtypes) {
      it(`${dtype}: values, shape and dtype survive save/load`, () => {
        const base = kd.tensor([[-3, 0, 1.5], [2, 7, -0.5]], { dtype: 'float64' });
        const t = dtype === 'bool' ? base.gt(0) : base.to(dtype);
        const f = tmpFile(`rt-${dtype}.safetensors`);
        kd.saveSync({ x: t }, f);
        const back = kd.loadSync(f);
        assertSameTensor(back.x, t, dtype);
      });
    }

    it('0-d, empty and non-contiguous tensors', () => {
      const x = kd.arange(12, { dtype: 'float32' }).reshape([3, 4]);
      const tensors = {
        scalar: kd.tensor(2.5, { dtype: 'float32' }),
        empty: kd.zeros([0, 4], { dtype: 'int32' }),
        empty3: kd.zeros([2, 0, 3], { dtype: 'float16' }),
        transposed: x.t(),
        strided: x.select(1, 2),
        expanded: kd.tensor([1, 2, 3], { dtype: 'int16' }).expand([2, 3]),
      };
      assert.equal(tensors.transposed.isContiguous(), false);
      const f = tmpFile('special.safetensors');
      kd.saveSync(tensors, f);
      const back = kd.loadSync(f);
      assert.deepEqual(Object.keys(back), Object.keys(tensors));
      for (const k of Object.keys(tensors)) assertSameTensor(back[k], tensors[k], k);
      assert.deepEqual(back.scalar.shape, []);
      assert.equal(back.transposed.isContiguous(), true);
    });

    it('int64 keeps all 64 bits; float specials and -0 are bit exact', () => {
      const big = kd.tensor(BigInt64Array.from([-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n]));
      const sp = kd.tensor(Float64Array.from([NaN, Infinity, -Infinity, -0, 5e-324]));
      const back = kd.safetensors.deserialize(kd.safetensors.serialize({ big, sp }));
      assert.deepEqual(Array.from(back.big.dataSync()), Array.from(big.dataSync()));
      assert.ok(Object.is(back.sp.dataSync()[3], -0));
      assert.deepEqual(Array.from(back.sp.dataSync()), Array.from(sp.dataSync()));
    });

    it('nested state dicts flatten to dotted keys; Maps, arrays and stateDict() too', () => {
      const w = kd.ones([2, 2]);
      const b = kd.zeros([2]);
      const model = { stateDict: () => ({ 'fc.weight': w, 'fc.bias': b }) };
      const f = tmpFile('nested.safetensors');
      kd.saveSync({ model, extra: new Map([['steps', [kd.tensor(1), kd.tensor(2)]]]), enc: { layer: { w } } }, f);
      const back = kd.loadSync(f);
      assert.deepEqual(Object.keys(back), ['model.fc.weight', 'model.fc.bias', 'extra.steps.0', 'extra.steps.1', 'enc.layer.w']);
      assert.deepEqual(back['extra.steps.1'].item(), 2);
      assert.deepEqual(kd.safetensors.flatten({ a: { b: w } })['a.b'], w);
    });

    it('metadata is written and read back; values must be strings', () => {
      const f = tmpFile('meta.safetensors');
      kd.saveSync({ x: kd.ones([1]) }, f, { metadata: { format: 'pt', note: 'héllo' } });
      assert.deepEqual(kd.safetensors.loadMetadata(f), { format: 'pt', note: 'héllo' });
      assert.throws(() => kd.saveSync({ x: kd.ones([1]) }, f, { metadata: { n: 1 } }), { code: 'KD_INVALID_TYPE' });
    });

    it('the file layout is the safetensors one (8-byte LE length, padded JSON, tensors in order)', () => {
      const buf = kd.safetensors.serialize({ a: kd.ones([2], { dtype: 'float32' }), b: kd.ones([3], { dtype: 'uint8' }) });
      const n = Number(buf.readBigUInt64LE(0));
      assert.equal((8 + n) % 8, 0);
      const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
      assert.deepEqual(header, {
        a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
        b: { dtype: 'U8', shape: [3], data_offsets: [8, 11] },
      });
      assert.equal(buf.length, 8 + n + 11);
      assert.match(buf.subarray(8, 8 + n).toString('latin1'), /^\{.*\} *$/);
    });

    it('async save/load and loading onto a device', async () => {
      const f = tmpFile('async.safetensors');
      await kd.save({ x: kd.arange(5) }, f);
      const back = await kd.load(f, { device: 'cpu' });
      assert.deepEqual(back.x.arraySync(), [0, 1, 2, 3, 4]);
      if (!kd.cuda.isAvailable()) {
        assert.throws(() => kd.loadSync(f, { device: 'cuda' }), (e) => e instanceof kd.KindlingError);
      } else {
        assert.equal(kd.loadSync(f, { device: 'cuda' }).x.device, 'cuda:0');
      }
      await assert.rejects(kd.load(tmpFile('missing.safetensors')), (e) => e instanceof kd.KindlingError && e.code === 'KD_IO_ERROR' &&
        e.cause.code === 'ENOENT' && /^load\(\): ENOENT: no such file or directory/.test(e.message));
    });

    it("files that cannot be opened, read or written are KD_IO_ERROR with the file system's reason", async () => {
      const missing = tmpFile('no-such-dir/x.safetensors');
      const io = (where, reason) => (e) => e instanceof kd.KindlingError && e.code === 'KD_IO_ERROR' && e.message.startsWith(`${where}: ${reason}`);
      assert.throws(() => kd.loadSync(missing), io('loadSync()', 'ENOENT'));
      assert.throws(() => kd.loadCheckpointSync(missing), io('loadCheckpointSync()', 'ENOENT'));
      await assert.rejects(kd.loadCheckpoint(missing), io('loadCheckpoint()', 'ENOENT'));
      assert.throws(() => kd.safetensors.loadMetadata(missing), io('loadMetadata()', 'ENOENT'));
      assert.throws(() => kd.saveSync({ x: kd.ones([1]) }, missing), io('saveSync()', 'ENOENT'));
      await assert.rejects(kd.save({ x: kd.ones([1]) }, missing), io('save()', 'ENOENT'));
      assert.throws(() => kd.saveCheckpointSync({ x: kd.ones([1]) }, missing), io('saveSync()', 'ENOENT'));
      assert.throws(() => kd.saveSync({ x: kd.ones([1]) }, tmp), io('saveSync()', 'EISDIR'));
      assert.throws(() => kd.loadSync(tmp), io('loadSync()', 'EISDIR'));
    });

    it('bad arguments are clear errors', () => {
      const f = tmpFile('bad.safetensors');
      assert.throws(() => kd.saveSync(kd.ones([1]), f), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => kd.saveSync({ x: 3 }, f), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => kd.saveSync({ __metadata__: kd.ones([1]) }, f), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => kd.saveSync({ 'a.b': kd.ones([1]), a: { b: kd.ones([1]) } }, f), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => kd.saveSync({ x: kd.ones([1]) }, 42), { code: 'KD_INVALID_TYPE' });
      kd.saveSync({ x: kd.ones([1]) }, f);
      assert.throws(() => kd.loadSync(f, { dvice: 'cpu' }), { code: 'KD_INVALID_TYPE' });
      const d = kd.ones([1]);
      d.dispose();
      assert.throws(() => kd.saveSync({ d }, f), { code: 'KD_INVALID_ARGUMENT' });
    });
  });

  describe('fixtures', () => {
    it('loads the file written from PyTorch tensors (from_python.safetensors)', () => {
      const f = path.join(FIX, 'from_python.safetensors');
      assertMatchesExpected(kd.loadSync(f));
      assert.deepEqual(kd.safetensors.loadMetadata(f), expected.metadata);
    });

    it('writes from_kindling.safetensors byte for byte, and it loads back', () => {
      const f = path.join(FIX, 'from_kindling.safetensors');
      const tensors = expectedTensors();
      assert.equal(tensors['model.fc.weight'].isContiguous(), false);
      const bytes = kd.safetensors.serialize(tensors, { metadata: { format: 'pt', source: 'kindling' } });
      if (process.env.KD_UPDATE_FIXTURES === '1') fs.writeFileSync(f, bytes);
      assert.ok(bytes.equals(fs.readFileSync(f)), 'kindling no longer writes the committed fixture');
      assertMatchesExpected(kd.loadSync(f));
    });

    it('Python parsed from_kindling.safetensors with the strict reader and got the same tensors', () => {
      const r = JSON.parse(fs.readFileSync(path.join(FIX, 'from_kindling.check.json'), 'utf8'));
      assert.equal(r.parsed, true, r.error);
      assert.equal(r.ok, true);
      assert.equal(r.header_padded_to_8, true);
      assert.deepEqual(Object.keys(r.tensors).sort(), Object.keys(expected.tensors).sort());
      assert.ok(Object.values(r.tensors).every((v) => v === true));
    });
  });

  describe('malformed files', () => {
    const good = () => kd.safetensors.serialize({ a: kd.arange(4, { dtype: 'float32' }), b: kd.ones([2, 2], { dtype: 'int64' }) });
    // A file with the given header object (as JSON text, or an object) and `data` bytes.
    function withHeader(header, dataLen = 48) {
      const json = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header));
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(json.length));
      return Buffer.concat([len, json, Buffer.alloc(dataLen)]);
    }
    const invalid = (buf, re) => {
      assert.throws(() => kd.safetensors.deserialize(buf), (e) => {
        assert.ok(e instanceof kd.KindlingError, `not a KindlingError: ${e}`);
        assert.equal(e.code, 'KD_INVALID_FILE');
        if (re) assert.match(e.message, re);
        return true;
      });
    };

    it('too short, header length past the end, huge header length', () => {
      invalid(Buffer.alloc(0), /too short/);
      invalid(Buffer.alloc(7), /too short/);
      const b = good();
      b.writeBigUInt64LE(BigInt(b.length), 0);
      invalid(b, /past the end/);
      b.writeBigUInt64LE(2n ** 64n - 1n, 0);
      invalid(b, /larger than the 100 MB limit/);
    });

    it('header that is not UTF-8, not JSON, or not an object', () => {
      invalid(withHeader(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('latin1')), /JSON|UTF-8/);
      const bad = Buffer.concat([Buffer.from([4, 0, 0, 0, 0, 0, 0, 0]), Buffer.from([0x7b, 0xc3, 0x28, 0x7d])]);
      invalid(bad, /UTF-8/);
      invalid(withHeader('{"a": '), /not valid JSON/);
      invalid(withHeader('[1, 2]'), /not a JSON object/);
      invalid(withHeader('null  '), /not a JSON object/);
    });

    it('unknown dtypes, bad shapes, shapes that do not match the byte count', () => {
      invalid(withHeader({ a: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }), /unsupported dtype 'F8_E4M3'/);
      invalid(withHeader({ a: { dtype: 'U32', shape: [1], data_offsets: [0, 4] } }), /unsupported dtype/);
      invalid(withHeader({ a: { shape: [1], data_offsets: [0, 4] } }), /missing dtype/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }), /non-negative/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [1.5], data_offsets: [0, 4] } }), /non-negative/);
      invalid(withHeader({ a: { dtype: 'F32', shape: 4, data_offsets: [0, 16] } }), /shape must be an array/);
      invalid(withHeader({ a: { dtype: 'F32', shape: new Array(17).fill(1), data_offsets: [0, 4] } }), /17 dims/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }), /needs 12 bytes but data_offsets span 8/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [2 ** 40, 2 ** 40], data_offsets: [0, 8] } }), /needs/);
      invalid(withHeader({ a: 5 }), /not an object/);
      invalid(withHeader({ __metadata__: { a: 1 } }), /__metadata__/);
      invalid(withHeader({ __metadata__: [] }), /__metadata__/);
    });

    it('offsets out of range, reversed or overlapping', () => {
      invalid(withHeader({ a: { dtype: 'F32', shape: [4], data_offsets: [40, 56] } }), /past the end of the data \(48 bytes\)/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [1], data_offsets: [2 ** 60, 2 ** 60 + 4] } }), /data_offsets/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [0], data_offsets: [8, 4] } }), /end before they begin/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [1], data_offsets: [0] } }), /data_offsets must be/);
      invalid(withHeader({ a: { dtype: 'F32', shape: [1], data_offsets: [-4, 0] } }), /data_offsets must be/);
      invalid(withHeader({
        a: { dtype: 'F32', shape: [4], data_offsets: [0, 16] },
        b: { dtype: 'F32', shape: [4], data_offsets: [12, 28] },
      }), /'a' and 'b' overlap/);
      // empty tensors at the same offset do not overlap anything
      const ok = kd.safetensors.deserialize(withHeader({
        a: { dtype: 'F32', shape: [0], data_offsets: [4, 4] },
        b: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      }));
      assert.deepEqual(ok.a.shape, [0]);
    });

    it('unaligned tensor data still loads (copied once)', () => {
      const buf = withHeader({ b: { dtype: 'U8', shape: [1], data_offsets: [0, 1] }, a: { dtype: 'F64', shape: [1], data_offsets: [1, 9] } }, 9);
      const n = Number(buf.readBigUInt64LE(0));
      buf.writeDoubleLE(1.25, 8 + n + 1);
      assert.equal(kd.safetensors.deserialize(buf).a.item(), 1.25);
    });

    it('malformed files on disk are KD_INVALID_FILE (mapped path)', () => {
      const f = tmpFile('truncated.safetensors');
      fs.writeFileSync(f, good().subarray(0, 20));
      assert.throws(() => kd.loadSync(f), { code: 'KD_INVALID_FILE' });
      fs.writeFileSync(f, Buffer.alloc(0));
      assert.throws(() => kd.loadSync(f), { code: 'KD_INVALID_FILE' });
    });

    it('fuzz: every truncation and flipped header bytes give an error or a valid result', () => {
      const full = good();
      const n = Number(full.readBigUInt64LE(0));
      const f = tmpFile('fuzz.safetensors');
      let errors = 0;
      let valid = 0;
      const tryOne = (buf, viaFile) => {
        let out;
        try {
          if (viaFile) {
            fs.writeFileSync(f, buf);
            out = kd.loadSync(f);
          } else {
            out = kd.safetensors.deserialize(buf);
          }
        } catch (e) {
          assert.ok(e instanceof kd.KindlingError, `unexpected error ${e && e.stack}`);
          assert.equal(e.code, 'KD_INVALID_FILE', e.message);
          errors++;
          return;
        }
        valid++;
        for (const t of Object.values(out)) {
          t.dataSync();
          t.dispose();
        }
      };
      for (let cut = 0; cut < full.length; cut++) tryOne(full.subarray(0, cut), cut % 7 === 0);
      let seed = 12345;
      const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed; };
      for (let pos = 0; pos < 8 + n; pos++) {
        for (const mask of [0x01, 0x20, 0x80, 0xff]) {
          const b = Buffer.from(full);
          b[pos] ^= mask;
          tryOne(b, false);
        }
      }
      for (let k = 0; k < 500; k++) {
        const b = Buffer.from(full);
        for (let m = 0; m < 3; m++) b[8 + (rnd() % n)] = rnd() & 0xff;
        tryOne(b, false);
      }
      assert.ok(errors > full.length - 2, `${errors} errors`);
      assert.ok(valid > 0);
    });
  });

  describe('checkpoints', () => {
    it('model + optimizer + epoch round trip, tensors in safetensors and the rest in __metadata__', async () => {
      const w = kd.randn([3, 2]);
      const state = {
        model: { stateDict: () => ({ 'fc.weight': w, 'fc.bias': kd.zeros([3]) }) },
        optimizer: {
          state: { 0: { step: kd.tensor(3, { dtype: 'float32' }), exp_avg: kd.ones([3, 2]) } },
          param_groups: [{ lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0, amsgrad: false, params: [0, 1] }],
        },
        epoch: 7,
        best: Infinity,
        nothing: null,
        missing: undefined,
        name: 'run-1',
        big: 2n ** 70n,
        history: new Map([['loss', [0.5, 0.25]]]),
        $weird: { $tensor: 'not really' },
      };
      const f = tmpFile('ckpt.safetensors');
      await kd.saveCheckpoint(state, f);
      const plain = kd.loadSync(f);
      assert.deepEqual(Object.keys(plain).sort(), ['model.fc.bias', 'model.fc.weight', 'optimizer.state.0.exp_avg', 'optimizer.state.0.step']);
      const meta = kd.safetensors.loadMetadata(f);
      assert.equal(JSON.parse(meta['kindling.checkpoint']).format, 1);
      const back = await kd.loadCheckpoint(f);
      assertSameTensor(back.model['fc.weight'], w, 'weight');
      assert.equal(back.optimizer.state[0].step.item(), 3);
      assert.deepEqual(back.optimizer.param_groups, state.optimizer.param_groups);
      assert.equal(back.epoch, 7);
      assert.equal(back.best, Infinity);
      assert.equal(back.nothing, null);
      assert.ok('missing' in back && back.missing === undefined);
      assert.equal(back.name, 'run-1');
      assert.equal(back.big, 2n ** 70n);
      assert.deepEqual(back.history, new Map([['loss', [0.5, 0.25]]]));
      assert.deepEqual(back.$weird, { $tensor: 'not really' });
      const sync = kd.loadCheckpointSync(f);
      assert.equal(sync.epoch, 7);
    });

    it('errors: non-object state, functions, a plain safetensors file', () => {
      const f = tmpFile('ckpt2.safetensors');
      assert.throws(() => kd.saveCheckpointSync(5, f), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => kd.saveCheckpointSync({ fn: () => 1 }, f), { code: 'KD_INVALID_TYPE' });
      kd.saveSync({ x: kd.ones([1]) }, f);
      assert.throws(() => kd.loadCheckpointSync(f), { code: 'KD_INVALID_FILE' });
    });
  });

  // Writes a safetensors file by hand: header entries, then each {at, bytes} at data offset `at`
  // (the file is extended with ftruncate, so a multi-GiB file takes no disk for its holes).
  function writeSparse(f, header, size, chunks) {
    let json = Buffer.from(JSON.stringify(header), 'utf8');
    json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
    const prefix = Buffer.alloc(8);
    prefix.writeBigUInt64LE(BigInt(json.length));
    const fd = fs.openSync(f, 'w');
    try {
      fs.writeSync(fd, prefix);
      fs.writeSync(fd, json);
      const dataStart = 8 + json.length;
      fs.ftruncateSync(fd, dataStart + size);
      for (const { at, bytes } of chunks) fs.writeSync(fd, bytes, 0, bytes.length, dataStart + at);
    } finally {
      fs.closeSync(fd);
    }
  }

  describe('files over 4 GiB', () => {
    // No Buffer over the whole file (src/napi/file_map.c, Note [No Buffer over the whole file]):
    // a Buffer holds at most 4 GiB, and refusing one used to free the mapping twice (an abort).
    const G = 4.5 * 2 ** 30;
    const tail = new Float32Array([1.5, -2, 3, 4]);
    const bigFile = () => {
      const f = tmpFile('big.safetensors');
      writeSparse(f, {
        __metadata__: { note: 'sparse' },
        head: { dtype: 'I64', shape: [2], data_offsets: [0, 16] },
        tail: { dtype: 'F32', shape: [2, 2], data_offsets: [G, G + 16] },
      }, G + 16, [{ at: 0, bytes: Buffer.from(new BigInt64Array([7n, -8n]).buffer) }, { at: G, bytes: Buffer.from(tail.buffer) }]);
      assert.ok(fs.statSync(f).size > 2 ** 32);
      return f;
    };

    it('loadSync, load and loadMetadata read a sparse 4.5 GiB file', async () => {
      const f = bigFile();
      assert.deepEqual(kd.safetensors.loadMetadata(f), { note: 'sparse' });
      for (const t of [kd.loadSync(f), await kd.load(f)]) {
        assert.deepEqual(Object.keys(t), ['head', 'tail']);
        assert.deepEqual(Array.from(t.head.dataSync()), [7n, -8n]);
        assert.deepEqual(t.tail.shape, [2, 2]);
        assert.deepEqual(Array.from(t.tail.dataSync()), Array.from(tail));
      }
    });
  });

  describe('chunked reads', () => {
    // See Note [Chunked tensor reads] in lib/serialization.js: the internal chunk size is lowered
    // so that small files take the paths a tensor of gigabytes takes.
    const { knobs } = require('../lib/serialization');
    const saved = { ...knobs };
    afterEach(() => Object.assign(knobs, saved));
    const ITEM = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

    // One tensor of each dtype, their bytes arbitrary (any bit pattern), starting at every offset
    // modulo 8 in the file's data.
    function unalignedFile() {
      const header = {};
      const chunks = [];
      const bytesOf = {};
      let at = 0;
      let seed = 7;
      Object.entries(ITEM).forEach(([code, size], k) => {
        at += (k - (at % 8) + 8) % 8; // begin % 8 === k % 8
        const n = 5 * size;
        const bytes = Buffer.alloc(n);
        for (let i = 0; i < n; i++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          bytes[i] = code === 'BOOL' ? (seed >>> 16) & 1 : seed >>> 24;
        }
        header[`t${code}`] = { dtype: code, shape: [5], data_offsets: [at, at + n] };
        chunks.push({ at, bytes });
        bytesOf[`t${code}`] = bytes;
        at += n + 3;
      });
      const f = tmpFile('unaligned.safetensors');
      writeSparse(f, header, at, chunks);
      return { f, bytesOf };
    }
    // the raw bytes of a loaded tensor, as kindling writes them
    const rawBytes = (t) => { const b = kd.safetensors.serialize({ x: t }); return b.subarray(b.length - t.numel() * ITEM[DTYPE_ST[t.dtype]]); };
    const DTYPE_ST = Object.fromEntries(Object.entries(ST_DTYPE).map(([k, v]) => [v, k]));

    for (const map of [true, false]) {
      it(`tensors at any offset load byte for byte in chunks of any size (${map ? 'mapped' : 'fs.readSync'})`, async () => {
        const { f, bytesOf } = unalignedFile();
        knobs.map = map;
        for (const chunkBytes of [1, 3, 7, 16, saved.chunkBytes]) {
          knobs.chunkBytes = chunkBytes;
          for (const out of [kd.loadSync(f), await kd.load(f), kd.safetensors.deserialize(fs.readFileSync(f))]) {
            for (const [name, bytes] of Object.entries(bytesOf)) {
              assert.deepEqual(out[name].shape, [5]);
              assert.ok(rawBytes(out[name]).equals(bytes), `${name}, chunks of ${chunkBytes}`);
            }
            for (const t of Object.values(out)) t.dispose();
          }
        }
      });
    }
  });

  // `npm run test:large` (KINDLING_TEST_LARGE=1): tensors of 4 GiB and more, from sparse files;
  // each needs the tensor's size in memory, once.
  (process.env.KINDLING_TEST_LARGE === '1' ? describe : describe.skip)('large files (KINDLING_TEST_LARGE=1)', function () {
    this.timeout(600000);
    const { knobs } = require('../lib/serialization');
    const saved = { ...knobs };
    afterEach(() => Object.assign(knobs, saved));

    for (const map of [true, false]) {
      it(`a tensor of about 4 GiB at an offset with begin % 8 == 7, and one over 4 GiB (${map ? 'mapped' : 'fs.readSync'})`, () => {
        knobs.map = map;
        for (const [n, begin] of [[2 ** 30 - 1, 7], [2 ** 30 + 2, 0]]) { // float32: 4 GiB - 4 bytes, 4 GiB + 8 bytes
          const f = tmpFile('large.safetensors');
          const ends = new Float32Array([1.5, -2]);
          const firstTwo = Buffer.from(new Float32Array([3, 4]).buffer);
          writeSparse(f, { pad: { dtype: 'U8', shape: [begin], data_offsets: [0, begin] }, x: { dtype: 'F32', shape: [n], data_offsets: [begin, begin + 4 * n] } },
            begin + 4 * n, [{ at: begin, bytes: firstTwo }, { at: begin + 4 * (n - 2), bytes: Buffer.from(ends.buffer) }]);
          const { x, pad } = kd.loadSync(f);
          try {
            assert.deepEqual(x.shape, [n]);
            assert.deepEqual(Array.from(x.narrow(0, 0, 2).dataSync()), [3, 4]);
            assert.deepEqual(Array.from(x.narrow(0, n - 2, 2).dataSync()), [1.5, -2]);
            assert.equal(x.sum().item(), 3 + 4 + 1.5 - 2);
          } finally {
            x.dispose();
            pad.dispose();
            fs.rmSync(f);
          }
        }
      });
    }
  });

  describe('keys from files', () => {
    it("a tensor named '__proto__' is an own key, not the result's prototype", () => {
      const f = tmpFile('proto.safetensors');
      const bytes = Buffer.from(new Float32Array([1, 2]).buffer);
      writeSparse(f, JSON.parse('{"__proto__": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},' +
        '"constructor": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}'), 8, [{ at: 0, bytes }]);
      for (const out of [kd.loadSync(f), kd.safetensors.deserialize(fs.readFileSync(f))]) {
        assert.equal(Object.getPrototypeOf(out), Object.prototype);
        assert.deepEqual(Object.keys(out), ['__proto__', 'constructor']);
        assert.ok(Object.getOwnPropertyDescriptor(out, '__proto__').value instanceof kd.Tensor);
        assert.deepEqual(Array.from(Object.getOwnPropertyDescriptor(out, '__proto__').value.dataSync()), [1]);
        assert.deepEqual(Array.from(out.constructor.dataSync()), [2]);
      }
    });

    it("tensors named '__proto__', 'constructor' and 'hasOwnProperty' survive load -> save -> load", async () => {
      const names = ['__proto__', 'constructor', 'hasOwnProperty'];
      const sd = {};
      names.forEach((n, i) => Object.defineProperty(sd, n, { value: kd.tensor([i + 1], { dtype: 'float32' }), enumerable: true }));
      const check = (out, what) => {
        assert.equal(Object.getPrototypeOf(out), Object.prototype, what);
        assert.deepEqual(Object.keys(out), names, what);
        names.forEach((n, i) => assert.deepEqual(Array.from(Object.getOwnPropertyDescriptor(out, n).value.dataSync()), [i + 1], `${what}: ${n}`));
      };
      const f = tmpFile('names.safetensors');
      kd.saveSync(sd, f);
      const once = kd.loadSync(f);
      check(once, 'saveSync');
      kd.saveSync(once, f); // what was loaded saves again, every name kept
      check(kd.loadSync(f), 'load -> saveSync -> load');
      await kd.save(once, f);
      check(await kd.load(f), 'load -> save -> load');
      check(kd.safetensors.deserialize(kd.safetensors.serialize(once)), 'serialize');
      check(kd.safetensors.deserialize(kd.safetensors.serialize(new Map(names.map((n) => [n, once[n]])))), 'a Map');
      // nested: the names are path segments
      const nested = kd.safetensors.deserialize(kd.safetensors.serialize({ m: once }));
      assert.deepEqual(Object.keys(nested), names.map((n) => `m.${n}`));
      assert.equal(({}).dtype, undefined); // nothing reached Object.prototype
    });

    it("an optimizer's and a scheduler's state keep '__proto__' keys through a checkpoint, and their prototypes", () => {
      const w = kd.zeros([2], { requiresGrad: true });
      const opt = new kd.optim.SGD([w], { lr: 0.1 });
      const sched = new kd.optim.lrScheduler.StepLR(opt, 2);
      // keys a hostile (or merely unusual) checkpoint may hold
      const hostile = JSON.parse('{"__proto__": {"polluted": true}}');
      opt.loadStateDict({ state: {}, paramGroups: [{ ...opt.stateDict().paramGroups[0], ...hostile }] });
      sched.loadStateDict({ ...sched.stateDict(), ...hostile });
      assert.equal(Object.getPrototypeOf(sched), kd.optim.lrScheduler.StepLR.prototype);
      assert.equal(typeof sched.step, 'function');
      assert.equal(sched.polluted, undefined);
      const f = tmpFile('hostile-ckpt.safetensors');
      kd.saveCheckpointSync({ opt, sched }, f);
      const back = kd.loadCheckpointSync(f);
      assert.deepEqual(Object.getOwnPropertyDescriptor(back.opt.paramGroups[0], '__proto__').value, { polluted: true });
      assert.deepEqual(Object.getOwnPropertyDescriptor(back.sched, '__proto__').value, { polluted: true });
      const sched2 = new kd.optim.lrScheduler.StepLR(new kd.optim.SGD([w], { lr: 0.1 }), 2);
      sched2.loadStateDict(back.sched);
      assert.equal(Object.getPrototypeOf(sched2), kd.optim.lrScheduler.StepLR.prototype);
      assert.equal(({}).polluted, undefined);
    });

    it("checkpoints keep '__proto__' keys and do not take inherited members for tensors", () => {
      const f = tmpFile('proto-ckpt.safetensors');
      const state = JSON.parse('{"__proto__": {"w": 1}, "epoch": 2}');
      state.t = kd.ones([1]);
      kd.saveCheckpointSync(state, f);
      const back = kd.loadCheckpointSync(f);
      assert.equal(Object.getPrototypeOf(back), Object.prototype);
      assert.deepEqual(Object.getOwnPropertyDescriptor(back, '__proto__').value, { w: 1 });
      assert.equal(back.epoch, 2);
      // a skeleton pointing at 'constructor' (not a tensor in the file) is an invalid file
      const g = tmpFile('inherited.safetensors');
      kd.saveSync({ x: kd.ones([1]) }, g, { metadata: { 'kindling.checkpoint': JSON.stringify({ format: 1, state: { a: { $tensor: 'constructor' } } }) } });
      assert.throws(() => kd.loadCheckpointSync(g), { code: 'KD_INVALID_FILE' });
    });
  });

  it('a header longer than the 100 MB limit of the format is refused before anything is read', async () => {
    // as the safetensors crate (MAX_HEADER_SIZE = 100_000_000): a sparse file of 100 MB + 9 bytes,
    // so that the header length fits in the file, and a short file claiming 2^64 - 1 bytes
    const f = tmpFile('huge-header.safetensors');
    const fd = fs.openSync(f, 'w');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(100000001n);
    fs.writeSync(fd, len, 0, 8, 0);
    fs.ftruncateSync(fd, 8 + 100000001);
    fs.closeSync(fd);
    const limit = { code: 'KD_INVALID_FILE', message: /larger than the 100 MB limit/ };
    assert.throws(() => kd.loadSync(f), limit);
    await assert.rejects(kd.load(f), limit);
    assert.throws(() => kd.safetensors.loadMetadata(f), limit);
    fs.rmSync(f);
    len.writeBigUInt64LE(2n ** 64n - 1n);
    assert.throws(() => kd.safetensors.deserialize(Buffer.concat([len, Buffer.from('{}')])), limit);
    // exactly 100 MB is allowed: that header is read (and here is not JSON)
    len.writeBigUInt64LE(100000000n);
    const g = tmpFile('limit-header.safetensors');
    fs.writeFileSync(g, len);
    fs.truncateSync(g, 8 + 100000000);
    assert.throws(() => kd.loadSync(g), { code: 'KD_INVALID_FILE', message: /not valid (UTF-8|JSON)/ });
    fs.rmSync(g);
  });

  describe('corrupt checkpoint skeletons', () => {
    // each is KD_INVALID_FILE (BigInt('x') alone would be a SyntaxError, deep nesting a RangeError)
    const skeletons = {
      'a $bigint that is not an integer': { format: 1, state: { n: { $bigint: 'not a number' } } },
      'a $bigint that is not a string': { format: 1, state: { n: { $bigint: {} } } },
      'a $number that is not NaN or an infinity': { format: 1, state: { n: { $number: {} } } },
      'a $tensor key that is not a string': { format: 1, state: { w: { $tensor: ['x'] } } },
      'an $object that is an array': { format: 1, state: { $object: [1] } },
    };
    for (const [name, skeleton] of Object.entries(skeletons)) {
      it(name, async () => {
        const f = tmpFile('corrupt-skeleton.safetensors');
        kd.tidy(() => kd.saveSync({ x: kd.ones([1]) }, f, { metadata: { 'kindling.checkpoint': JSON.stringify(skeleton) } }));
        assert.throws(() => kd.loadCheckpointSync(f), { code: 'KD_INVALID_FILE' });
        await assert.rejects(kd.loadCheckpoint(f), { code: 'KD_INVALID_FILE' });
      });
    }
    it('nesting deeper than saveCheckpoint writes', () => {
      const f = tmpFile('deep-skeleton.safetensors');
      const text = `{"format":1,"state":${'['.repeat(100000)}${']'.repeat(100000)}}`;
      kd.tidy(() => kd.saveSync({ x: kd.ones([1]) }, f, { metadata: { 'kindling.checkpoint': text } }));
      assert.throws(() => kd.loadCheckpointSync(f), { code: 'KD_INVALID_FILE', message: /nesting deeper than 130 levels/ });
    });
    it('what saveCheckpoint writes at its deepest still loads', () => {
      const f = tmpFile('deepest-ckpt.safetensors');
      kd.tidy(() => {
        let state = { w: kd.ones([1]) };
        for (let i = 0; i < 31; i++) state = { m: new Map([['k', state]]) };
        kd.saveCheckpointSync(state, f);
        let back = kd.loadCheckpointSync(f);
        for (let i = 0; i < 31; i++) back = back.m.get('k');
        assert.deepEqual(Array.from(back.w.dataSync()), [1]);
      });
    });
  });

  describe('checkpoint lifetime and argument order', () => {
    it('loadCheckpointSync and loadCheckpoint dispose what they loaded when they throw', async () => {
      const f = tmpFile('bad-ckpt.safetensors');
      kd.saveSync({ a: kd.ones([2]), b: kd.ones([3]) }, f, { metadata: { 'kindling.checkpoint': '{not json' } });
      const g = tmpFile('missing-ckpt.safetensors');
      kd.saveSync({ a: kd.ones([2]) }, g, { metadata: { 'kindling.checkpoint': JSON.stringify({ format: 1, state: { a: { $tensor: 'a' }, b: { $tensor: 'b' } } }) } });
      const live = collectGarbage().liveTensors;
      for (const file of [f, g]) {
        assert.throws(() => kd.loadCheckpointSync(file), { code: 'KD_INVALID_FILE' });
        await assert.rejects(kd.loadCheckpoint(file), { code: 'KD_INVALID_FILE' });
      }
      assert.equal(kd.memory().liveTensors, live);
    });

    it('tensors in a checkpoint file that the saved object does not hold are disposed', () => {
      const f = tmpFile('extra-ckpt.safetensors');
      kd.saveSync({ a: kd.ones([2]), extra: kd.ones([3]) }, f, { metadata: { 'kindling.checkpoint': JSON.stringify({ format: 1, state: { a: { $tensor: 'a' } } }) } });
      const live = collectGarbage().liveTensors;
      const back = kd.loadCheckpointSync(f);
      assert.equal(kd.memory().liveTensors, live + 1);
      back.a.dispose();
    });

    it('saveCheckpoint(state, path) takes real modules and optimizers; saveSync(model, path) too', async () => {
      const model = new kd.nn.Sequential(new kd.nn.Linear(2, 3), new kd.nn.ReLU(), new kd.nn.Linear(3, 1));
      assert.equal(typeof model, 'function'); // modules are callable
      const optimizer = new kd.optim.Adam(model.parameters(), { lr: 0.01 });
      model(kd.ones([4, 2])).sum().backward();
      optimizer.step();
      const f = tmpFile('module-ckpt.safetensors');
      await kd.saveCheckpoint({ model, optimizer, epoch: 5 }, f);
      const back = kd.loadCheckpointSync(f);
      assert.equal(back.epoch, 5);
      const sd = model.stateDict();
      assert.deepEqual(Object.keys(back.model).sort(), Object.keys(sd).sort());
      for (const k of Object.keys(sd)) assert.deepEqual(Array.from(back.model[k].dataSync()), Array.from(sd[k].dataSync()), k);
      const fresh = new kd.nn.Sequential(new kd.nn.Linear(2, 3), new kd.nn.ReLU(), new kd.nn.Linear(3, 1));
      fresh.loadStateDict(back.model);
      const opt2 = new kd.optim.Adam(fresh.parameters(), { lr: 0.01 });
      opt2.loadStateDict(back.optimizer);
      const step = opt2.stateDict().state[0].step;
      assert.equal(step instanceof kd.Tensor ? step.item() : step, 1);

      const g = tmpFile('module.safetensors');
      kd.saveSync(model, g);
      assert.deepEqual(Object.keys(kd.loadSync(g)).sort(), Object.keys(sd).sort());
      kd.saveCheckpointSync({ model }, g);
      assert.deepEqual(Object.keys(kd.loadCheckpointSync(g).model).sort(), Object.keys(sd).sort());
    });

    it('the older saveCheckpoint(path, state) order still works, with one deprecation warning', () => {
      // in a child process: the warning is once per process
      const { spawnSync } = require('node:child_process');
      const f = tmpFile('old-order.safetensors');
      const src = `
        const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
        const codes = [];
        process.on('warning', (w) => codes.push(w.code));
        (async () => {
          kd.saveCheckpointSync(${JSON.stringify(f)}, { epoch: 1, w: kd.ones([2]) });
          await kd.saveCheckpoint(${JSON.stringify(f)}, { epoch: 2, w: kd.ones([2]) });
          const epoch = kd.loadCheckpointSync(${JSON.stringify(f)}).epoch;
          setImmediate(() => console.log(JSON.stringify({ epoch, codes })));
        })();`;
      const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { epoch: 2, codes: ['KD_DEP_CHECKPOINT_ORDER'] });
      assert.match(r.stderr, /saveCheckpointSync\(path, state\) is deprecated/);
    });
  });
});
