// attention.js - kd.nn.functional.multiHeadAttentionForward, the kd.nn.MultiheadAttention that
// forwards through it, and kd.nn.TransformerEncoderLayer, written with kindling ops (PyTorch's
// multi_head_attention_forward: packed in_proj_weight [3E, E] or separate
// q/k/v_proj_weight when kdim/vdim differ, out_proj, optional bias_k/bias_v and zero attention).
// Masks follow PyTorch: a bool attnMask/keyPaddingMask is true where attention is NOT allowed; a
// float mask is added to the scores. Without the weights (needWeights false, as the transformer
// layers call it) the heads go through kd.nn.functional.scaledDotProductAttention, as PyTorch 2 does.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installAttention(kd, nn, { Module, ownedParameter, parseArgs }) {
  const F = kd.nn.functional;
  const init = nn.init;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });

  // A bool mask -> float (-inf where true); a float mask as is.
  function floatMask(mask, dtype, what) {
    if (mask === null || mask === undefined) return null;
    if (mask.dtype === 'bool') return kd.zeros(mask.shape, { dtype, device: mask.device }).maskedFill(mask, -Infinity);
    if (!['float32', 'float64', 'float16', 'bfloat16'].includes(mask.dtype)) {
      throw new KindlingError(`only bool and floating types of ${what} are supported`, 'KD_DTYPE_MISMATCH');
    }
    return mask;
  }

  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');

  /**
   * PyTorch's functional multi-head attention over (L, N, E) query and (S, N, E) key/value (or
   * unbatched (L, E), (S, E)); nn.MultiheadAttention's forward. multiHeadAttentionForward(query, key,
   * value, embedDimToCheck, numHeads, inProjWeight, inProjBias, biasK, biasV, addZeroAttn, dropoutP,
   * outProjWeight, outProjBias, training=true, keyPaddingMask=null, needWeights=true, attnMask=null,
   * useSeparateProjWeight=false, qProjWeight=null, kProjWeight=null, vProjWeight=null, staticK=null,
   * staticV=null, averageAttnWeights=true) returns [output, weights] (also .output, .weights).
   */
  F.multiHeadAttentionForward = function multiHeadAttentionForward(query, key, value, ...rest) {
    const o = parseArgs('multiHeadAttentionForward()', rest,
      ['embedDimToCheck', 'numHeads', 'inProjWeight', 'inProjBias', 'biasK', 'biasV', 'addZeroAttn', 'dropoutP', 'outProjWeight',
        'outProjBias', 'training', 'keyPaddingMask', 'needWeights', 'attnMask', 'useSeparateProjWeight', 'qProjWeight', 'kProjWeight',
        'vProjWeight', 'staticK', 'staticV', 'averageAttnWeights'],
      { training: true, keyPaddingMask: null, needWeights: true, attnMask: null, useSeparateProjWeight: false, qProjWeight: null,
        kProjWeight: null, vProjWeight: null, staticK: null, staticV: null, averageAttnWeights: true });
    const H = o.numHeads;
    const batched = query.ndim === 3;
    if (!batched && query.ndim !== 2) {
      throw shapeError(`query should be unbatched 2D or batched 3D tensor but received ${query.ndim}-D query tensor`);
    }
    if (key.ndim !== query.ndim || value.ndim !== query.ndim) {
      throw shapeError(`For ${batched ? 'batched (3-D)' : 'unbatched (2-D)'} \`query\`, expected \`key\` and \`value\` to be ${query.ndim}-D but found ${key.ndim}-D and ${value.ndim}-D tensors respectively`);
    }
    let q = query; let k = key; let v = value;
    let kpm = o.keyPaddingMask;
    if (!batched) {
      q = q.unsqueeze(1); k = k.unsqueeze(1); v = v.unsqueeze(1);
      if (kpm) kpm = kpm.unsqueeze(0);
    }
    const [L, N, E] = q.shape;
    if (E !== o.embedDimToCheck) throw shapeError(`was expecting embedding dimension of ${o.embedDimToCheck}, but got ${E}`);
    const hd = Math.floor(E / H);
    if (hd * H !== E) throw new KindlingError(`embed_dim ${E} not divisible by num_heads ${H}`, 'KD_INVALID_ARGUMENT');
    if (o.useSeparateProjWeight) {
      if (k.shape[0] !== v.shape[0] || k.shape[1] !== v.shape[1]) {
        throw shapeError(`key's sequence and batch dims ${JSON.stringify(k.shape.slice(0, 2))} do not match value's ${JSON.stringify(v.shape.slice(0, 2))}`);
      }
    } else if (k.shape.some((d, i) => d !== v.shape[i])) {
      throw shapeError(`key shape ${JSON.stringify(k.shape)} does not match value shape ${JSON.stringify(v.shape)}`);
    }
    // projections
    let bq = null; let bk = null; let bv = null;
    if (o.inProjBias) [bq, bk, bv] = o.inProjBias.chunk(3);
    if (!o.useSeparateProjWeight) {
      if (!o.inProjWeight) throw new KindlingError('useSeparateProjWeight is false but inProjWeight is null', 'KD_INVALID_ARGUMENT');
      const [wq, wk, wv] = o.inProjWeight.chunk(3);
      q = F.linear(q, wq, bq); k = F.linear(k, wk, bk); v = F.linear(v, wv, bv);
    } else {
      for (const w of ['qProjWeight', 'kProjWeight', 'vProjWeight']) {
        if (!o[w]) throw new KindlingError(`useSeparateProjWeight is true but ${w} is null`, 'KD_INVALID_ARGUMENT');
      }
      q = F.linear(q, o.qProjWeight, bq); k = F.linear(k, o.kProjWeight, bk); v = F.linear(v, o.vProjWeight, bv);
    }
    // masks
    let attnMask = floatMask(o.attnMask, q.dtype, 'attn_mask');
    const S0 = k.shape[0];
    if (attnMask !== null) {
      if (attnMask.ndim === 2) {
        if (attnMask.shape[0] !== L || attnMask.shape[1] !== S0) {
          throw shapeError(`The shape of the 2D attn_mask is ${JSON.stringify(attnMask.shape)}, but should be ${JSON.stringify([L, S0])}.`);
        }
        attnMask = attnMask.unsqueeze(0);
      } else if (attnMask.ndim === 3) {
        if (attnMask.shape[0] !== N * H || attnMask.shape[1] !== L || attnMask.shape[2] !== S0) {
          throw shapeError(`The shape of the 3D attn_mask is ${JSON.stringify(attnMask.shape)}, but should be ${JSON.stringify([N * H, L, S0])}.`);
        }
      } else {
        throw shapeError(`attn_mask's dimension ${attnMask.ndim} is not supported`);
      }
    }
    let padMask = floatMask(kpm, q.dtype, 'key_padding_mask');
    if (o.biasK && o.biasV) {
      if (o.staticK || o.staticV) throw new KindlingError('bias cannot be added to static key or value.', 'KD_INVALID_ARGUMENT');
      k = kd.cat([k, o.biasK.expand([1, N, E])]);
      v = kd.cat([v, o.biasV.expand([1, N, E])]);
      if (attnMask !== null) attnMask = F.pad(attnMask, [0, 1]);
      if (padMask !== null) padMask = F.pad(padMask, [0, 1]);
    } else if (o.biasK || o.biasV) {
      throw new KindlingError('biasK and biasV must both be given or both be null', 'KD_INVALID_ARGUMENT');
    }
    // heads: (L, N, E) -> (N * H, L, hd)
    q = q.reshape([L, N * H, hd]).transpose(0, 1);
    const statik = (t, what) => {
      if (t.ndim !== 3 || t.shape[0] !== N * H) throw shapeError(`expecting ${what}.size(0) of ${N * H}, but got ${t.ndim ? t.shape[0] : 0}`);
      if (t.shape[2] !== hd) throw shapeError(`expecting ${what}.size(2) of ${hd}, but got ${t.shape[2]}`);
      return t;
    };
    k = o.staticK ? statik(o.staticK, 'static_k') : k.reshape([k.shape[0], N * H, hd]).transpose(0, 1);
    v = o.staticV ? statik(o.staticV, 'static_v') : v.reshape([v.shape[0], N * H, hd]).transpose(0, 1);
    if (o.addZeroAttn) {
      k = kd.cat([k, kd.zeros([N * H, 1, hd], { dtype: k.dtype, device: k.device })], 1);
      v = kd.cat([v, kd.zeros([N * H, 1, hd], { dtype: v.dtype, device: v.device })], 1);
      if (attnMask !== null) attnMask = F.pad(attnMask, [0, 1]);
      if (padMask !== null) padMask = F.pad(padMask, [0, 1]);
    }
    const S = k.shape[1];
    if (padMask !== null) {
      if (padMask.ndim !== 2 || padMask.shape[0] !== N || padMask.shape[1] !== S) {
        throw shapeError(`expecting key_padding_mask shape of ${JSON.stringify([N, S])}, but got ${JSON.stringify(padMask.shape)}`);
      }
      const pm = padMask.reshape([N, 1, 1, S]).expand([N, H, 1, S]).reshape([N * H, 1, S]);
      attnMask = attnMask === null ? pm : attnMask.add(pm);
    }
    const p = o.training ? o.dropoutP : 0;
    let attn = null;
    let out; // (N * H, L, hd)
    if (o.needWeights) {
      let scores = kd.bmm(q.mul(1 / Math.sqrt(hd)), k.transpose(1, 2));
      if (attnMask !== null) scores = scores.add(attnMask);
      attn = F.softmax(scores, -1);
      if (p > 0) attn = F.dropout(attn, p, true);
      out = kd.bmm(attn, v);
    } else { // as PyTorch 2: the fused attention when the weights are not returned
      const m = attnMask !== null && attnMask.dtype !== q.dtype ? attnMask.to(q.dtype) : attnMask;
      out = F.scaledDotProductAttention(q, k, v, m, p);
    }
    out = out.transpose(0, 1).reshape([L * N, E]);
    out = F.linear(out, o.outProjWeight, o.outProjBias).reshape([L, N, E]);
    let weights = null;
    if (o.needWeights) {
      weights = attn.reshape([N, H, L, S]);
      if (o.averageAttnWeights) weights = weights.mean(1);
      if (!batched) weights = weights.squeeze(0);
    }
    if (!batched) out = out.squeeze(1);
    const r = [out, weights];
    r.output = out;
    r.weights = weights;
    return r;
  };

  /**
   * Multi-head attention. MultiheadAttention(embedDim, numHeads, dropout=0, bias=true, addBiasKV=false,
   * addZeroAttn=false, kdim=embedDim, vdim=embedDim, batchFirst=false).
   * forward(query, key, value, {keyPaddingMask, needWeights=true, attnMask, averageAttnWeights=true, isCausal=false})
   * returns [output, weights] (weights null when needWeights is false).
   */
  class MultiheadAttention extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('MultiheadAttention()', args,
        ['embedDim', 'numHeads', 'dropout', 'bias', 'addBiasKv', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst'],
        { dropout: 0, bias: true, addBiasKv: false, addBiasKV: false, addZeroAttn: false, kdim: null, vdim: null, batchFirst: false, device: null, dtype: null });
      const E = o.embedDim;
      if (!Number.isInteger(E) || E <= 0 || !Number.isInteger(o.numHeads) || o.numHeads <= 0) {
        throw new KindlingError(`embed_dim and num_heads must be greater than 0, got embed_dim=${E} and num_heads=${o.numHeads} instead`, 'KD_INVALID_ARGUMENT');
      }
      this.embedDim = E;
      this.kdim = o.kdim === null ? E : o.kdim;
      this.vdim = o.vdim === null ? E : o.vdim;
      this.qkvSameEmbedDim = this.kdim === E && this.vdim === E;
      this.numHeads = o.numHeads;
      this.dropout = o.dropout;
      this.batchFirst = o.batchFirst;
      this.headDim = Math.floor(E / o.numHeads);
      if (this.headDim * o.numHeads !== E) throw new KindlingError('embed_dim must be divisible by num_heads', 'KD_INVALID_ARGUMENT');
      const f = factory(o);
      if (!this.qkvSameEmbedDim) {
        this.qProjWeight = ownedParameter(kd.empty([E, E], f));
        this.kProjWeight = ownedParameter(kd.empty([E, this.kdim], f));
        this.vProjWeight = ownedParameter(kd.empty([E, this.vdim], f));
        this.registerParameter('inProjWeight', null);
      } else {
        this.inProjWeight = ownedParameter(kd.empty([3 * E, E], f));
        this.registerParameter('qProjWeight', null);
        this.registerParameter('kProjWeight', null);
        this.registerParameter('vProjWeight', null);
      }
      if (o.bias) this.inProjBias = ownedParameter(kd.empty([3 * E], f));
      else this.registerParameter('inProjBias', null);
      this.outProj = new nn.Linear(E, E, { bias: o.bias, ...f });
      if (o.addBiasKv || o.addBiasKV) {
        this.biasK = ownedParameter(kd.empty([1, 1, E], f));
        this.biasV = ownedParameter(kd.empty([1, 1, E], f));
      } else {
        this.biasK = null;
        this.biasV = null;
      }
      this.addZeroAttn = o.addZeroAttn;
      this.resetParameters();
    }
    resetParameters() {
      if (this.qkvSameEmbedDim) init.xavierUniform_(this.inProjWeight);
      else { init.xavierUniform_(this.qProjWeight); init.xavierUniform_(this.kProjWeight); init.xavierUniform_(this.vProjWeight); }
      if (this.inProjBias) { init.constant_(this.inProjBias, 0); init.constant_(this.outProj.bias, 0); }
      if (this.biasK) init.xavierNormal_(this.biasK);
      if (this.biasV) init.xavierNormal_(this.biasV);
    }

    forward(query, key, value, ...rest) {
      const o = parseArgs('MultiheadAttention.forward()', rest, ['keyPaddingMask', 'needWeights', 'attnMask', 'averageAttnWeights', 'isCausal'],
        { keyPaddingMask: null, needWeights: true, attnMask: null, averageAttnWeights: true, isCausal: false });
      const batchFirst = this.batchFirst && query.ndim === 3;
      let [q, k, v] = [query, key, value];
      if (batchFirst) { q = q.transpose(0, 1); k = k.transpose(0, 1); v = v.transpose(0, 1); }
      let attnMask = o.attnMask;
      if (attnMask === null && o.isCausal && q.ndim >= 2 && k.ndim >= 2) {
        const [L, S] = [q.shape[0], k.shape[0]];
        attnMask = kd.ones([L, S], { dtype: 'bool', device: q.device }).triu(1);
      }
      const r = F.multiHeadAttentionForward(q, k, v, this.embedDim, this.numHeads, this.inProjWeight, this.inProjBias,
        this.biasK, this.biasV, this.addZeroAttn, this.dropout, this.outProj.weight, this.outProj.bias, this.training,
        o.keyPaddingMask, o.needWeights, attnMask, !this.qkvSameEmbedDim, this.qProjWeight, this.kProjWeight, this.vProjWeight,
        { averageAttnWeights: o.averageAttnWeights });
      if (batchFirst) { r[0] = r[0].transpose(0, 1); r.output = r[0]; }
      return r;
    }
    extraRepr() { return ''; }
  }

  const ACT = { relu: (x) => F.relu(x), gelu: (x) => F.gelu(x) };

  /**
   * One transformer encoder block (self-attention, then a feed-forward net, each with a residual
   * connection and layer norm). TransformerEncoderLayer(dModel, nhead, dimFeedforward=2048,
   * dropout=0.1, activation='relu' | 'gelu' | fn, layerNormEps=1e-5, batchFirst=false,
   * normFirst=false, bias=true). forward(src, {srcMask, srcKeyPaddingMask, isCausal}).
   */
  class TransformerEncoderLayer extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('TransformerEncoderLayer()', args,
        ['dModel', 'nhead', 'dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst'],
        { dimFeedforward: 2048, dropout: 0.1, activation: 'relu', layerNormEps: 1e-5, batchFirst: false, normFirst: false, bias: true, device: null, dtype: null });
      const f = factory(o);
      this.selfAttn = new MultiheadAttention(o.dModel, o.nhead, { dropout: o.dropout, bias: o.bias, batchFirst: o.batchFirst, ...f });
      this.linear1 = new nn.Linear(o.dModel, o.dimFeedforward, { bias: o.bias, ...f });
      this.dropout = new nn.Dropout(o.dropout);
      this.linear2 = new nn.Linear(o.dimFeedforward, o.dModel, { bias: o.bias, ...f });
      this.normFirst = o.normFirst;
      this.norm1 = new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, bias: o.bias, ...f });
      this.norm2 = new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, bias: o.bias, ...f });
      this.dropout1 = new nn.Dropout(o.dropout);
      this.dropout2 = new nn.Dropout(o.dropout);
      if (typeof o.activation === 'string') {
        if (!ACT[o.activation]) throw new KindlingError(`activation should be relu/gelu, not ${o.activation}`, 'KD_INVALID_ARGUMENT');
        this.activationName = o.activation;
        this._act = ACT[o.activation];
      } else if (typeof o.activation === 'function') {
        this.activationName = null;
        if (o.activation instanceof Module) this.activation = o.activation; else this._act = o.activation;
      } else {
        throw new KindlingError(`activation should be relu/gelu or a function, not ${o.activation}`, 'KD_INVALID_ARGUMENT');
      }
    }
    forward(src, ...rest) {
      const o = parseArgs('TransformerEncoderLayer.forward()', rest, ['srcMask', 'srcKeyPaddingMask', 'isCausal'],
        { srcMask: null, srcKeyPaddingMask: null, isCausal: false });
      const sa = (x) => this.dropout1(this.selfAttn(x, x, x, {
        attnMask: o.srcMask, keyPaddingMask: o.srcKeyPaddingMask, needWeights: false, isCausal: o.isCausal,
      })[0]);
      const act = this.activation instanceof Module ? this.activation : this._act;
      const ff = (x) => this.dropout2(this.linear2(this.dropout(act(this.linear1(x)))));
      let x = src;
      if (this.normFirst) {
        x = x.add(sa(this.norm1(x)));
        x = x.add(ff(this.norm2(x)));
      } else {
        x = this.norm1(x.add(sa(x)));
        x = this.norm2(x.add(ff(x)));
      }
      return x;
    }
  }

  Object.assign(nn, { MultiheadAttention, TransformerEncoderLayer });
};
