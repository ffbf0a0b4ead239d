// slot-cache.js - the key/value cache of continuous batching (generator.js): one row per running
// sequence, each row with its own length, so that sequences join and leave the decode batch
// between steps. It offers what examples/gpt2/model.js asks of a cache (batch, length, maxLength,
// update(layer, kv)) for one-token decode steps: row b writes its new key and value at its own
// column lens[b], and the step's attentionMask (mask()) marks columns [0, lens[b]] of row b, so
// that GPT2Model counts positions per row (cumsum of the mask) and masks the columns past a row's
// end (stale values of an earlier, longer sequence).
// Rows stay packed (0 .. batch - 1, a view of the buffers, no gather): a sequence joins as the
// next row, copied from the cache of its own prefill; one that leaves is replaced by the last row.
'use strict';

class SlotCache {
  /** Room for `slots` sequences of at most maxLength positions, on the model's device and dtype. */
  constructor(kd, model, slots, maxLength) {
    const c = model.config;
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive integer, got ${slots}`);
    if (!Number.isInteger(maxLength) || maxLength < 2 || maxLength > c.nPositions) {
      throw new RangeError(`maxLength must be an integer in [2, nPositions=${c.nPositions}], got ${maxLength}`);
    }
    const w = model.transformer.wte.weight;
    const shape = [2, slots, c.nHead, maxLength, c.nEmbd / c.nHead];
    this.kd = kd;
    this.slots = slots;
    this.maxLength = maxLength;
    this.lens = []; // positions filled, per row
    this.kv = Array.from({ length: c.nLayer }, () => kd.keep(kd.zeros(shape, { device: w.device, dtype: w.dtype })));
  }

  get batch() { return this.lens.length; }

  /** The longest row: the past the model sees (shorter rows are masked past their end). */
  get length() { return this.lens.length ? Math.max(...this.lens) : 0; }

  /** (GPT2Model advances a shared length after a forward; rows advance in advance().) */
  set length(_) {}

  /** Writes kv [2, batch, nHead, 1, headDim] at each row's length; the filled keys and values. */
  update(i, kv) {
    if (kv.shape[3] !== 1) throw new RangeError(`SlotCache: decode steps take one position per row, got ${kv.shape[3]}`);
    const past = this.length;
    for (let b = 0; b < this.lens.length; b++) this.kv[i].select(1, b).narrow(2, this.lens[b], 1).copy_(kv.select(1, b));
    const filled = this.kv[i].narrow(1, 0, this.lens.length).narrow(3, 0, past + 1);
    return [filled.select(0, 0), filled.select(0, 1)];
  }

  /** The step's attentionMask (batch, length + 1), int64: row b is 1 on columns [0, lens[b]]. */
  mask(device) {
    const S = this.length + 1;
    const m = new BigInt64Array(this.lens.length * S);
    this.lens.forEach((len, b) => m.fill(1n, b * S, b * S + len + 1));
    return this.kd.tensor(m, { device }).view(this.lens.length, S);
  }

  /** Every row one position longer (after a decode step). */
  advance() { for (let b = 0; b < this.lens.length; b++) this.lens[b]++; }

  /** Adds a row from `single`, a model.makeCache(1, ...) holding a prefilled prompt; its index. */
  add(single) {
    if (this.lens.length === this.slots) throw new RangeError('SlotCache: every slot is taken');
    const T = single.length;
    const row = this.lens.length;
    this.kd.tidy(() => { // (the views are freed at once)
      for (let i = 0; i < this.kv.length; i++) this.kv[i].select(1, row).narrow(2, 0, T).copy_(single.kv[i].select(1, 0).narrow(2, 0, T));
    });
    this.lens.push(T);
    return row;
  }

  /** Removes row r: the last row moves into its place (callers move what they keep per row alike). */
  remove(r) {
    const last = this.lens.length - 1;
    if (r !== last) {
      const n = this.lens[last];
      this.kd.tidy(() => { for (const t of this.kv) t.select(1, r).narrow(2, 0, n).copy_(t.select(1, last).narrow(2, 0, n)); });
      this.lens[r] = n;
    }
    this.lens.pop();
  }

  dispose() {
    for (const t of this.kv) t.dispose();
    this.kv = [];
  }
}

module.exports = { SlotCache };
