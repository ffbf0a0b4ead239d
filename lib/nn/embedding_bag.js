// embedding_bag.js - kd.nn.functional.embeddingBag and kd.nn.EmbeddingBag: the sums, means or
// maxima of bags of embedding rows, bags given by offsets into a 1-D index tensor or as the rows
// of a 2-D one (PyTorch 1.13's arguments: mode, offsets, perSampleWeights, includeLastOffset,
// paddingIdx; EmbeddingBag.fromPretrained). The rows are gathered with indexSelect and reduced
// into their bags with indexAdd (sum, mean) or scatterReduce('amax') (max), so autograd and every
// device come with it. Padding entries, and entries past the last bag, go to a spare bag that is
// dropped: they count toward nothing, and an empty bag is zeros, as in PyTorch.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installEmbeddingBag(kd, nn, { Module, Parameter, parseArgs, ownedParameter }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const INTS = ['int64', 'int32'];
  const ARGS = ['offsets', 'maxNorm', 'normType', 'scaleGradByFreq', 'mode', 'sparse', 'perSampleWeights', 'includeLastOffset', 'paddingIdx'];
  const DEFAULTS = { offsets: null, maxNorm: null, normType: 2, scaleGradByFreq: false, mode: 'mean', sparse: false,
    perSampleWeights: null, includeLastOffset: false, paddingIdx: null };

  /** embeddingBag(input, weight, offsets = null, maxNorm, normType, scaleGradByFreq, mode = 'mean', sparse,
   * perSampleWeights = null, includeLastOffset = false, paddingIdx = null). */
  F.embeddingBag = function embeddingBag(input, weight, ...args) {
    const o = parseArgs('embeddingBag()', args, ARGS, DEFAULTS);
    if (!(input instanceof kd.Tensor) || !(weight instanceof kd.Tensor)) throw new kd.KindlingTypeError('embeddingBag(): input and weight must be Tensors');
    if (!INTS.includes(input.dtype)) throw invalid(`embedding_bag: expected input to be an int64 or int32 tensor, got ${input.dtype}`);
    if (weight.ndim !== 2) throw new KindlingError(`embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension ${weight.ndim}`, 'KD_SHAPE_MISMATCH');
    let psw = o.perSampleWeights;
    if (psw && !(psw.ndim === input.ndim && psw.shape.every((s, i) => s === input.shape[i]))) {
      throw invalid(`embedding_bag: If per_sample_weights ([${psw.shape.join(', ')}]) is not None, then it must have the same shape as the input ([${input.shape.join(', ')}])`);
    }
    let idx = input;
    let offsets = o.offsets;
    if (input.ndim === 2) {
      if (offsets !== null) {
        throw invalid('if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type Tensor');
      }
      offsets = kd.arange(0, input.numel(), Math.max(1, input.shape[1]), { dtype: input.dtype, device: input.device });
      idx = input.reshape([-1]);
      if (psw) psw = psw.reshape([-1]);
    } else if (input.ndim === 1) {
      if (offsets === null) throw invalid('offsets has to be a 1D Tensor but got None');
      if (!(offsets instanceof kd.Tensor) || offsets.ndim !== 1) throw invalid('offsets has to be a 1D Tensor');
    } else {
      throw invalid(`input has to be 1D or 2D Tensor, but got Tensor of dimension ${input.ndim}`);
    }
    if (!['sum', 'mean', 'max'].includes(o.mode)) throw invalid('mode has to be one of sum, mean or max');
    if (o.mode === 'max' && o.scaleGradByFreq) throw invalid('max mode does not support scaling the gradient by the frequency');
    if (o.mode === 'max' && o.sparse) throw invalid('max mode does not support sparse weights');
    if (psw && o.mode !== 'sum') {
      throw new KindlingError(`embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='${o.mode}').`, 'KD_INVALID_ARGUMENT');
    }
    if (o.maxNorm !== null || o.scaleGradByFreq || o.sparse) {
      throw new KindlingError('embeddingBag: maxNorm, scaleGradByFreq and sparse are not supported', 'KD_NOT_SUPPORTED');
    }
    const [numRows, dim] = weight.shape;
    let pad = o.paddingIdx;
    if (pad !== null) {
      if (pad >= numRows || pad < -numRows) throw invalid('padding_idx must be within the number of embeddings');
      if (pad < 0) pad += numRows;
    }
    const dev = weight.device;
    const off = offsets.to('int64').to(dev);
    const bags = o.includeLastOffset ? Math.max(0, off.shape[0] - 1) : off.shape[0];
    const ix = idx.to('int64').to(dev);
    const m = ix.shape[0];
    // the bag of each index; padding and entries past the last bag go to the spare bag `bags`
    let seg = m === 0 ? ix : kd.searchsorted(off, kd.arange(m, { device: dev }), { right: true }).sub(1).clampMax(bags);
    if (pad !== null) seg = kd.where(ix.eq(pad), bags, seg);
    let rows = weight.indexSelect(0, ix);
    if (psw) rows = rows.mul(psw.to(dev).unsqueeze(1));
    const zeros = kd.zeros([bags + 1, dim], { dtype: weight.dtype, device: dev });
    let out;
    if (o.mode === 'max') {
      out = zeros.scatterReduce(0, seg.unsqueeze(1).expand([m, dim]), rows, 'amax', { includeSelf: false });
    } else {
      out = zeros.indexAdd(0, seg, rows);
      if (o.mode === 'mean') {
        const counts = kd.zeros([bags + 1], { dtype: weight.dtype, device: dev }).indexAdd(0, seg, kd.ones([m], { dtype: weight.dtype, device: dev }));
        out = out.div(counts.clampMin(1).unsqueeze(1));
      }
    }
    return out.narrow(0, 0, bags);
  };

  /** Sums, means or maxima of bags of embeddings. EmbeddingBag(numEmbeddings, embeddingDim, maxNorm, normType,
   * scaleGradByFreq, mode = 'mean', sparse, _weight, includeLastOffset = false, paddingIdx = null, {device, dtype});
   * forward(input, offsets = null, perSampleWeights = null). */
  class EmbeddingBag extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('EmbeddingBag()', args,
        ['numEmbeddings', 'embeddingDim', 'maxNorm', 'normType', 'scaleGradByFreq', 'mode', 'sparse', '_weight', 'includeLastOffset', 'paddingIdx'],
        { maxNorm: null, normType: 2, scaleGradByFreq: false, mode: 'mean', sparse: false, _weight: null, includeLastOffset: false,
          paddingIdx: null, device: null, dtype: null });
      for (const k of ['numEmbeddings', 'embeddingDim']) {
        if (!Number.isInteger(o[k]) || o[k] < 0) throw invalid(`EmbeddingBag(): ${k} must be a non-negative integer, got ${o[k]}`);
      }
      let pad = o.paddingIdx;
      if (pad !== null) {
        if (pad > 0 && pad >= o.numEmbeddings) throw invalid('padding_idx must be within num_embeddings');
        if (pad < 0 && pad < -o.numEmbeddings) throw invalid('padding_idx must be within num_embeddings');
        if (pad < 0) pad += o.numEmbeddings;
      }
      if (!['sum', 'mean', 'max'].includes(o.mode)) throw invalid('mode has to be one of sum, mean or max');
      if (o.maxNorm !== null || o.scaleGradByFreq || o.sparse) {
        throw new KindlingError('EmbeddingBag: maxNorm, scaleGradByFreq and sparse are not supported', 'KD_NOT_SUPPORTED');
      }
      this.numEmbeddings = o.numEmbeddings;
      this.embeddingDim = o.embeddingDim;
      this.maxNorm = o.maxNorm;
      this.normType = o.normType;
      this.scaleGradByFreq = o.scaleGradByFreq;
      this.mode = o.mode;
      this.sparse = o.sparse;
      this.includeLastOffset = o.includeLastOffset;
      this.paddingIdx = pad;
      if (o._weight) {
        const s = o._weight.shape;
        if (s.length !== 2 || s[0] !== o.numEmbeddings || s[1] !== o.embeddingDim) {
          throw new KindlingError('Shape of weight does not match num_embeddings and embedding_dim', 'KD_SHAPE_MISMATCH');
        }
        this.weight = new Parameter(o._weight);
      } else {
        const opts = {};
        if (o.device) opts.device = o.device;
        if (o.dtype) opts.dtype = o.dtype;
        this.weight = ownedParameter(kd.empty([o.numEmbeddings, o.embeddingDim], opts));
        this.resetParameters();
      }
    }
    resetParameters() {
      nn.init.normal_(this.weight);
      if (this.paddingIdx !== null) kd.noGrad(() => kd.tidy(() => { this.weight.select(0, this.paddingIdx).fill_(0); }));
    }
    forward(input, ...args) {
      const o = parseArgs('EmbeddingBag.forward()', args, ['offsets', 'perSampleWeights'], { offsets: null, perSampleWeights: null });
      return F.embeddingBag(input, this.weight, o.offsets, {
        mode: this.mode, perSampleWeights: o.perSampleWeights, includeLastOffset: this.includeLastOffset, paddingIdx: this.paddingIdx,
      });
    }
    extraRepr() {
      let s = `${this.numEmbeddings}, ${this.embeddingDim}`;
      if (this.normType !== 2) s += `, norm_type=${this.normType}`;
      s += `, mode=${this.mode}`;
      if (this.paddingIdx !== null) s += `, padding_idx=${this.paddingIdx}`;
      return s;
    }
    /** An EmbeddingBag holding `embeddings` (2-D); freeze (default true) turns its gradient off.
     * fromPretrained(embeddings, {freeze, mode, includeLastOffset, paddingIdx, ...}). */
    static fromPretrained(embeddings, options = {}) {
      const { freeze = true, ...rest } = options;
      if (!(embeddings instanceof kd.Tensor) || embeddings.ndim !== 2) {
        throw new KindlingError('Embeddings parameter is expected to be 2-dimensional', 'KD_SHAPE_MISMATCH');
      }
      const [rows, cols] = embeddings.shape;
      const e = new EmbeddingBag(rows, cols, { ...rest, _weight: embeddings });
      e.weight.requiresGrad = !freeze;
      return e;
    }
  }

  nn.EmbeddingBag = EmbeddingBag;
};
