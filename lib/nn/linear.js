// linear.js - kd.nn layers that map features: Identity, Linear, Bilinear, Embedding, Flatten,
// Unflatten, and F.bilinear (Bilinear's forward). Thin JS over kd.nn.functional (autograd sees the ops they call); weights start as
// PyTorch's defaults (kaiming_uniform with a = sqrt(5), biases U(+-1/sqrt(fanIn)), embeddings N(0, 1)).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installLinear(kd, nn, { Module, ParameterClass: Parameter, ownedParameter, parseArgs }) {
  const F = kd.nn.functional;
  const init = nn.init;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });
  const py = (b) => (b ? 'True' : 'False');

  function checkCount(v, what) {
    if (!Number.isInteger(v) || v < 0) throw typeError(`${what} must be a non-negative integer, got ${v}`);
  }

  /** Returns its input unchanged (any further arguments are ignored). */
  class Identity extends Module {
    forward(input) { return input; }
  }

  /** y = x W^T + b, weight [outFeatures, inFeatures]. Linear(in, out, bias = true, {dtype, device}). */
  class Linear extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Linear()', args, ['inFeatures', 'outFeatures', 'bias'], { bias: true, device: null, dtype: null });
      checkCount(o.inFeatures, 'inFeatures');
      checkCount(o.outFeatures, 'outFeatures');
      this.inFeatures = o.inFeatures;
      this.outFeatures = o.outFeatures;
      this.weight = ownedParameter(kd.empty([o.outFeatures, o.inFeatures], factory(o)));
      if (o.bias) this.bias = ownedParameter(kd.empty([o.outFeatures], factory(o)));
      else this.registerParameter('bias', null);
      this.resetParameters();
    }
    /** PyTorch's default initialisation. */
    resetParameters() {
      init.kaimingUniform_(this.weight, { a: Math.sqrt(5) });
      if (this.bias) {
        const fanIn = this.weight.shape[1];
        const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
        init.uniform_(this.bias, -bound, bound);
      }
    }
    forward(input) { return F.linear(input, this.weight, this.bias); }
    extraRepr() { return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, bias=${py(this.bias)}`; }
  }

  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');
  /**
   * y = x1^T A x2 + b over the last dims, weight [out, in1, in2], bias [out] or null; the leading
   * dims of input1 and input2 must be equal (PyTorch's checks and messages). bilinear(input1,
   * input2, weight, bias=null). nn.Bilinear's forward.
   */
  F.bilinear = function bilinear(...args) {
    const { input1, input2, weight, bias } = parseArgs('bilinear()', args, ['input1', 'input2', 'weight', 'bias'], { bias: null });
    for (const [k, t] of [['input1', input1], ['input2', input2], ['weight', weight]]) {
      if (!(t instanceof kd.Tensor)) throw typeError(`bilinear(): argument '${k}' must be Tensor, not ${t === null ? 'null' : typeof t}`);
    }
    if (bias !== null && !(bias instanceof kd.Tensor)) throw typeError(`bilinear(): argument 'bias' must be Tensor or null, not ${typeof bias}`);
    const s1 = input1.shape;
    const s2 = input2.shape;
    const sw = weight.shape;
    if (s1.length !== s2.length) throw shapeError(`bilinear(): input dimensions do not match: got ${s1.length} and ${s2.length}`);
    if (s1.length === 0) throw shapeError('bilinear(): inputs must have at least 1 dimension, got 0');
    for (let i = 0; i < s1.length - 1; i++) {
      if (s1[i] !== s2[i]) throw shapeError(`bilinear(): input batch dimensions do not match at dim ${i}: got ${s1[i]} and ${s2[i]}`);
    }
    if (sw.length !== 3) throw shapeError(`bilinear(): weight must be 3-D [out, in1, in2], got ${sw.length}-D`);
    const in1 = s1[s1.length - 1];
    const in2 = s2[s2.length - 1];
    if (in1 !== sw[1]) throw shapeError(`bilinear(): input1 size does not match weight size: got ${in1} but expected ${sw[1]}`);
    if (in2 !== sw[2]) throw shapeError(`bilinear(): input2 size does not match weight size: got ${in2} but expected ${sw[2]}`);
    if (bias !== null && (bias.dim() !== 1 || bias.shape[0] !== sw[0])) {
      throw shapeError(`bilinear(): bias size does not match weight size: got ${bias.dim() === 1 ? bias.shape[0] : `a ${bias.dim()}-D bias`} but expected ${sw[0]}`);
    }
    for (const t of [input2, weight, bias]) {
      if (t !== null && t.dtype !== input1.dtype) {
        throw new KindlingError(`bilinear(): expected scalar type ${input1.dtype} but found ${t.dtype}`, 'KD_DTYPE_MISMATCH');
      }
    }
    const lead = s1.slice(0, -1);
    const n = lead.reduce((a, b) => a * b, 1);
    let y = kd.einsum('bi,oij,bj->bo', [input1.reshape([n, in1]), weight, input2.reshape([n, in2])]);
    if (bias !== null) y = y.add(bias);
    return y.reshape([...lead, sw[0]]);
  };

  /** y = x1^T A x2 + b, weight [out, in1, in2]. Bilinear(in1, in2, out, bias = true). */
  class Bilinear extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Bilinear()', args, ['in1Features', 'in2Features', 'outFeatures', 'bias'],
        { bias: true, device: null, dtype: null });
      checkCount(o.in1Features, 'in1Features');
      checkCount(o.in2Features, 'in2Features');
      checkCount(o.outFeatures, 'outFeatures');
      this.in1Features = o.in1Features;
      this.in2Features = o.in2Features;
      this.outFeatures = o.outFeatures;
      this.weight = ownedParameter(kd.empty([o.outFeatures, o.in1Features, o.in2Features], factory(o)));
      if (o.bias) this.bias = ownedParameter(kd.empty([o.outFeatures], factory(o)));
      else this.registerParameter('bias', null);
      this.resetParameters();
    }
    resetParameters() {
      const bound = this.in1Features > 0 ? 1 / Math.sqrt(this.in1Features) : 0;
      init.uniform_(this.weight, -bound, bound);
      if (this.bias) init.uniform_(this.bias, -bound, bound);
    }
    forward(input1, input2) { return F.bilinear(input1, input2, this.weight, this.bias); }
    extraRepr() {
      return `in1_features=${this.in1Features}, in2_features=${this.in2Features}, out_features=${this.outFeatures}, bias=${py(this.bias)}`;
    }
  }

  /**
   * A lookup table: rows of weight [numEmbeddings, embeddingDim] picked by integer indices.
   * Embedding(num, dim, paddingIdx = null, {dtype, device, weight}); the paddingIdx row starts at
   * zero and gets no gradient. maxNorm, scaleGradByFreq and sparse are not supported.
   */
  class Embedding extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Embedding()', args, ['numEmbeddings', 'embeddingDim', 'paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse'],
        { paddingIdx: null, maxNorm: null, normType: 2, scaleGradByFreq: false, sparse: false, weight: null, Weight: null, device: null, dtype: null });
      checkCount(o.numEmbeddings, 'numEmbeddings');
      checkCount(o.embeddingDim, 'embeddingDim');
      let pad = o.paddingIdx;
      if (pad !== null) {
        if (pad > 0 && pad >= o.numEmbeddings) throw new KindlingError('Padding_idx must be within num_embeddings', 'KD_INVALID_ARGUMENT');
        if (pad < 0) {
          if (pad < -o.numEmbeddings) throw new KindlingError('Padding_idx must be within num_embeddings', 'KD_INVALID_ARGUMENT');
          pad += o.numEmbeddings;
        }
      }
      if (o.maxNorm !== null || o.scaleGradByFreq || o.sparse) {
        throw new KindlingError('Embedding: maxNorm, scaleGradByFreq and sparse are not supported', 'KD_NOT_SUPPORTED');
      }
      this.numEmbeddings = o.numEmbeddings;
      this.embeddingDim = o.embeddingDim;
      this.paddingIdx = pad;
      const w = o.weight || o.Weight;
      if (w) {
        const s = w.shape;
        if (s.length !== 2 || s[0] !== o.numEmbeddings || s[1] !== o.embeddingDim) {
          throw new KindlingError('Shape of weight does not match num_embeddings and embedding_dim', 'KD_SHAPE_MISMATCH');
        }
        this.weight = new Parameter(w);
      } else {
        this.weight = ownedParameter(kd.empty([o.numEmbeddings, o.embeddingDim], factory(o)));
        this.resetParameters();
      }
    }
    resetParameters() {
      init.normal_(this.weight);
      if (this.paddingIdx !== null) kd.noGrad(() => kd.tidy(() => { this.weight.select(0, this.paddingIdx).fill_(0); }));
    }
    forward(input) { return F.embedding(input, this.weight, this.paddingIdx); }
    extraRepr() {
      return `${this.numEmbeddings}, ${this.embeddingDim}${this.paddingIdx !== null ? `, padding_idx=${this.paddingIdx}` : ''}`;
    }
    /** An Embedding holding `embeddings` (2-D); freeze (default true) turns its gradient off. */
    static fromPretrained(embeddings, options = {}) {
      const { freeze = true, paddingIdx = null } = options;
      if (!(embeddings instanceof kd.Tensor) || embeddings.ndim !== 2) {
        throw new KindlingError('Embeddings parameter is expected to be 2-dimensional', 'KD_SHAPE_MISMATCH');
      }
      const [rows, cols] = embeddings.shape;
      const e = new Embedding(rows, cols, { paddingIdx, weight: embeddings });
      e.weight.requiresGrad = !freeze;
      return e;
    }
  }

  /** Flattens dims startDim..endDim (default 1..-1) into one. */
  class Flatten extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Flatten()', args, ['startDim', 'endDim'], { startDim: 1, endDim: -1 });
      this.startDim = o.startDim;
      this.endDim = o.endDim;
    }
    forward(input) { return input.flatten(this.startDim, this.endDim); }
    extraRepr() { return `start_dim=${this.startDim}, end_dim=${this.endDim}`; }
  }

  /** Splits dim into unflattenedSize (one entry may be -1). */
  class Unflatten extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Unflatten()', args, ['dim', 'unflattenedSize']);
      if (!Array.isArray(o.unflattenedSize) || !o.unflattenedSize.every(Number.isInteger)) {
        throw typeError('unflattened_size must be tuple of ints');
      }
      this.dim = o.dim;
      this.unflattenedSize = o.unflattenedSize.slice();
    }
    forward(input) {
      const shape = input.shape;
      const n = shape.length;
      if (!Number.isInteger(this.dim) || this.dim < -n || this.dim >= n) {
        throw new kd.KindlingRangeError(`Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${this.dim})`);
      }
      const d = this.dim < 0 ? this.dim + n : this.dim;
      const sizes = this.unflattenedSize;
      const known = sizes.filter((s) => s !== -1).reduce((a, b) => a * b, 1);
      const ok = sizes.includes(-1) ? known > 0 && shape[d] % known === 0 : known === shape[d];
      if (!ok) {
        throw new KindlingError(`unflatten: Provided sizes ${JSON.stringify(sizes)} don't multiply up to the size of dim ${this.dim} (${shape[d]}) in the input tensor`, 'KD_SHAPE_MISMATCH');
      }
      return input.reshape([...shape.slice(0, d), ...sizes, ...shape.slice(d + 1)]);
    }
    extraRepr() { return `dim=${this.dim}, unflattened_size=(${this.unflattenedSize.join(', ')})`; }
  }

  Object.assign(nn, { Identity, Linear, Bilinear, Embedding, Flatten, Unflatten });
};
