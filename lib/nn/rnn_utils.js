// rnn_utils.js - kd.nn.utils.rnn: PackedSequence and the functions that pack, pad and unpad
// batches of variable-length sequences (PyTorch's torch.nn.utils.rnn). A PackedSequence holds
// the rows of every sequence in time-major order: at time t the first batchSizes[t] sequences
// (sorted by decreasing length) contribute one row each. Moving rows between the padded and the
// packed layouts (with the sort and its inverse folded in) is ONE indexSelect of a row table
// computed in JS, so autograd sees one op whose backward is an indexAdd (linear in the data).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installRnnUtils(kd, nn, { parseArgs }) {
  const { Tensor } = kd;

  /**
   * PackedSequence(data, batchSizes, sortedIndices = null, unsortedIndices = null): data
   * [sum(lengths), *], batchSizes an int64 CPU tensor [maxLength] (non-increasing), sortedIndices
   * the original batch index of each sorted position (unsortedIndices its inverse). Iterates as
   * PyTorch's namedtuple: `const [data, batchSizes, sortedIndices, unsortedIndices] = packed`.
   */
  class PackedSequence {
    constructor(data, batchSizes = null, sortedIndices = null, unsortedIndices = null) {
      if (!(data instanceof Tensor)) throw typeError(`PackedSequence: data must be a Tensor, got ${data === null ? 'null' : typeof data}`);
      if (!(batchSizes instanceof Tensor)) {
        throw typeError('PackedSequence: batchSizes must be a Tensor (build packed sequences with packPaddedSequence or packSequence)');
      }
      if (batchSizes.ndim !== 1 || batchSizes.device !== 'cpu' || batchSizes.dtype !== 'int64') {
        throw new KindlingError(`batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. They should be instantiated by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence`, 'KD_INVALID_ARGUMENT');
      }
      if (unsortedIndices === null && sortedIndices !== null) unsortedIndices = invertPermutation(sortedIndices);
      this.data = data;
      this.batchSizes = batchSizes;
      this.sortedIndices = sortedIndices;
      this.unsortedIndices = unsortedIndices;
    }
    * [Symbol.iterator]() {
      yield this.data; yield this.batchSizes; yield this.sortedIndices; yield this.unsortedIndices;
    }
    /** The same sequence with data (and the index tensors) moved or cast by Tensor.to(...args). */
    to(...args) {
      const data = this.data.to(...args);
      if (data === this.data) return this;
      const dev = data.device;
      const idx = (t) => (t === null ? null : t.to(dev));
      return new PackedSequence(data, this.batchSizes, idx(this.sortedIndices), idx(this.unsortedIndices));
    }
    cpu() { return this.to('cpu'); }
    cuda(device = 'cuda') { return this.to(typeof device === 'number' ? `cuda:${device}` : device); }
    double() { return this.to('float64'); }
    float() { return this.to('float32'); }
    half() { return this.to('float16'); }
    get isCuda() { return this.data.device.startsWith('cuda'); }
    toString() { return `PackedSequence(data=${this.data}, batch_sizes=${this.batchSizes}, sorted_indices=${this.sortedIndices}, unsorted_indices=${this.unsortedIndices})`; }
  }

  function invertPermutation(perm) {
    const p = perm.arraySync();
    const inv = new Array(p.length);
    for (let i = 0; i < p.length; i++) inv[p[i]] = i;
    return kd.tensor(inv, { dtype: 'int64', device: perm.device });
  }

  const intList = (v, what) => {
    const a = v instanceof Tensor ? v.arraySync() : v;
    if (!Array.isArray(a) || a.some((x) => typeof x !== 'number' || !Number.isInteger(x))) {
      throw typeError(`${what} must be a 1-D tensor or an array of integers`);
    }
    return a;
  };

  /** The batch sizes (as numbers) of a PackedSequence. */
  function batchSizesOf(seq) { return seq.batchSizes.arraySync(); }

  /** Rows of `src` (a 2-D+ tensor) picked by a JS array of row numbers (one indexSelect). */
  function pickRows(src, rows) {
    const idx = kd.tensor(rows, { dtype: 'int64', device: src.device });
    try { return src.indexSelect(0, idx); } finally { idx.dispose(); }
  }

  /**
   * Packs a padded batch [T, B, *] (batchFirst: [B, T, *]) of sequences of the given lengths.
   * packPaddedSequence(input, lengths, batchFirst = false, enforceSorted = true).
   */
  function packPaddedSequence(input, ...rest) {
    const o = parseArgs('packPaddedSequence()', rest, ['lengths', 'batchFirst', 'enforceSorted'], { batchFirst: false, enforceSorted: true });
    if (!(input instanceof Tensor)) throw typeError('packPaddedSequence(): input must be a Tensor');
    const lengths = intList(o.lengths, 'packPaddedSequence(): lengths');
    if (input.ndim < 2) throw new KindlingError(`packPaddedSequence(): input must have at least 2 dimensions, got ${input.ndim}`, 'KD_SHAPE_MISMATCH');
    const bf = !!o.batchFirst;
    const B = input.shape[bf ? 0 : 1];
    const T = input.shape[bf ? 1 : 0];
    if (lengths.length !== B) {
      throw new KindlingError(`Expected \`len(lengths)\` to be equal to batch_size, but got ${lengths.length} (batch_size=${B})`, 'KD_SHAPE_MISMATCH');
    }
    let order = lengths.map((_, i) => i);
    if (o.enforceSorted) {
      for (let i = 1; i < B; i++) {
        if (lengths[i] > lengths[i - 1]) {
          throw new KindlingError('`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.', 'KD_INVALID_ARGUMENT');
        }
      }
    } else {
      order = order.sort((a, b) => lengths[b] - lengths[a] || a - b);
    }
    if (B > 0 && lengths[order[B - 1]] <= 0) {
      throw new KindlingError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0", 'KD_INVALID_ARGUMENT');
    }
    const maxLen = B > 0 ? lengths[order[0]] : 0;
    if (maxLen > T) {
      throw new KindlingError(`Expected sequence length to be at most ${T} (the padded length), but got a length of ${maxLen}`, 'KD_SHAPE_MISMATCH');
    }
    const batchSizes = [];
    const rows = [];
    for (let t = 0; t < maxLen; t++) {
      let n = 0;
      while (n < B && lengths[order[n]] > t) {
        rows.push(bf ? order[n] * T + t : t * B + order[n]);
        n++;
      }
      batchSizes.push(n);
    }
    const feat = input.shape.slice(2);
    const data = kd.tidy(() => pickRows(input.reshape([B * T, ...feat]), rows));
    const sorted = o.enforceSorted ? null : kd.tensor(order, { dtype: 'int64', device: input.device });
    return new PackedSequence(data, kd.tensor(batchSizes, { dtype: 'int64' }), sorted);
  }

  /**
   * The padded batch of a PackedSequence and the lengths: [padded [T, B, *] (batchFirst:
   * [B, T, *]), lengths (int64 CPU)], in the original batch order.
   * padPackedSequence(sequence, batchFirst = false, paddingValue = 0, totalLength = null).
   */
  function padPackedSequence(sequence, ...rest) {
    const o = parseArgs('padPackedSequence()', rest, ['batchFirst', 'paddingValue', 'totalLength'], { batchFirst: false, paddingValue: 0, totalLength: null });
    if (!(sequence instanceof PackedSequence)) throw typeError('padPackedSequence(): sequence must be a PackedSequence');
    const bs = batchSizesOf(sequence);
    const maxLen = bs.length;
    let T = maxLen;
    if (o.totalLength !== null) {
      if (o.totalLength < maxLen) {
        throw new KindlingError(`Expected total_length to be at least the length of the longest sequence in input, but got total_length=${o.totalLength} and max sequence length being ${maxLen}`, 'KD_INVALID_ARGUMENT');
      }
      T = o.totalLength;
    }
    const B = maxLen > 0 ? bs[0] : 0;
    const unsorted = sequence.unsortedIndices === null ? null : sequence.unsortedIndices.arraySync();
    const data = sequence.data;
    const N = data.shape[0];
    const offsets = [];
    let off = 0;
    for (const b of bs) { offsets.push(off); off += b; }
    const lengthsSorted = new Array(B).fill(0);
    for (let t = 0; t < maxLen; t++) for (let j = 0; j < bs[t]; j++) lengthsSorted[j] = t + 1;
    const bf = !!o.batchFirst;
    const rows = new Array(T * B);
    for (let b = 0; b < B; b++) {
      const j = unsorted === null ? b : unsorted[b];
      for (let t = 0; t < T; t++) {
        const r = t < maxLen && j < bs[t] ? offsets[t] + j : N;
        rows[bf ? b * T + t : t * B + b] = r;
      }
    }
    const feat = data.shape.slice(1);
    const padded = kd.tidy(() => {
      const pad = kd.full([1, ...feat], o.paddingValue, { dtype: data.dtype, device: data.device });
      return pickRows(kd.cat([data, pad]), rows).reshape(bf ? [B, T, ...feat] : [T, B, ...feat]);
    });
    const lengths = unsorted === null ? lengthsSorted : unsorted.map((j) => lengthsSorted[j]);
    return [padded, kd.tensor(lengths, { dtype: 'int64' })];
  }

  /**
   * Pads a list of tensors [L_i, *] to one [maxL, B, *] (batchFirst: [B, maxL, *]).
   * padSequence(sequences, batchFirst = false, paddingValue = 0).
   */
  function padSequence(sequences, ...rest) {
    const o = parseArgs('padSequence()', rest, ['batchFirst', 'paddingValue'], { batchFirst: false, paddingValue: 0 });
    const seqs = sequences instanceof Tensor ? [...sequences.unbind(0)] : sequences;
    if (!Array.isArray(seqs) || seqs.some((s) => !(s instanceof Tensor))) throw typeError('padSequence(): sequences must be an array of Tensors');
    if (seqs.length === 0) throw new KindlingError('received an empty list of sequences', 'KD_INVALID_ARGUMENT');
    const feat = seqs[0].shape.slice(1);
    for (const s of seqs) {
      if (s.ndim < 1 || s.shape.length !== feat.length + 1 || s.shape.slice(1).some((v, i) => v !== feat[i])) {
        throw new KindlingError(`The size of tensor a (${s.shape.slice(1).join(', ')}) must match the size of tensor b (${feat.join(', ')}) at non-singleton dimension 1`, 'KD_SHAPE_MISMATCH');
      }
    }
    const B = seqs.length;
    const lens = seqs.map((s) => s.shape[0]);
    const T = Math.max(...lens);
    const starts = [];
    let n = 0;
    for (const l of lens) { starts.push(n); n += l; }
    const bf = !!o.batchFirst;
    const rows = new Array(T * B);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) rows[bf ? b * T + t : t * B + b] = t < lens[b] ? starts[b] + t : n;
    }
    return kd.tidy(() => {
      const first = seqs[0];
      const pad = kd.full([1, ...feat], o.paddingValue, { dtype: first.dtype, device: first.device });
      return pickRows(kd.cat([...seqs, pad]), rows).reshape(bf ? [B, T, ...feat] : [T, B, ...feat]);
    });
  }

  /** Packs a list of tensors [L_i, *]. packSequence(sequences, enforceSorted = true). */
  function packSequence(sequences, ...rest) {
    const o = parseArgs('packSequence()', rest, ['enforceSorted'], { enforceSorted: true });
    if (!Array.isArray(sequences)) throw typeError('packSequence(): sequences must be an array of Tensors');
    const lengths = sequences.map((s) => s.shape[0]);
    const padded = padSequence(sequences);
    try {
      return packPaddedSequence(padded, lengths, { enforceSorted: o.enforceSorted });
    } finally {
      padded.dispose();
    }
  }

  /** The sequences of a padded batch, cut to their lengths (views). unpadSequence(padded, lengths, batchFirst = false). */
  function unpadSequence(padded, ...rest) {
    const o = parseArgs('unpadSequence()', rest, ['lengths', 'batchFirst'], { batchFirst: false });
    const lengths = intList(o.lengths, 'unpadSequence(): lengths');
    const x = o.batchFirst ? padded : padded.transpose(0, 1);
    const out = lengths.map((l, i) => x.select(0, i).narrow(0, 0, l));
    if (x !== padded) x.dispose();
    return out;
  }

  /** The sequences of a PackedSequence, as a list of tensors [L_i, *]. */
  function unpackSequence(packed) {
    const [padded, lengths] = padPackedSequence(packed, { batchFirst: true });
    try {
      return lengths.arraySync().map((l, i) => kd.tidy(() => padded.select(0, i).narrow(0, 0, l)));
    } finally {
      padded.dispose();
      lengths.dispose();
    }
  }

  nn.utils.rnn = { PackedSequence, packPaddedSequence, padPackedSequence, padSequence, packSequence, unpadSequence, unpackSequence, invertPermutation };
  return nn.utils.rnn;
};
