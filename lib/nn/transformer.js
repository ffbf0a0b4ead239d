// transformer.js - kd.nn.Transformer, TransformerEncoder, TransformerDecoder and
// TransformerDecoderLayer, PyTorch 1.13's (torch/nn/modules/transformer.py), over
// MultiheadAttention and TransformerEncoderLayer (attention.js). Masks are MultiheadAttention's:
// a bool attn/key padding mask is true where attention is NOT allowed, a float mask is added to
// the scores. State-dict names are PyTorch's (encoder.layers.0.self_attn.in_proj_weight, ...).
//
// kindling has no nested tensors: where PyTorch's TransformerEncoder would run on one (eval mode,
// no autograd, a key padding mask, enableNestedTensor), kindling computes every position and gives
// PyTorch's result (see Note [Nested-tensor inference]).
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installTransformer(kd, nn, base) {
  const { Module, parseArgs } = base;
  const F = kd.nn.functional;
  const { deepCopy } = base;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });

  /** PyTorch's _get_activation_fn plus callables: 'relu' | 'gelu' | a function or module. */
  function activationOf(activation) {
    if (activation === 'relu') return (x) => F.relu(x);
    if (activation === 'gelu') return (x) => F.gelu(x);
    if (typeof activation === 'function') return activation;
    throw new KindlingError(`activation should be relu/gelu, not ${activation}`, 'KD_INVALID_ARGUMENT');
  }

  function checkPaddingMask(mask) {
    if (mask !== null && mask !== undefined && !['bool', 'float32', 'float64', 'float16', 'bfloat16'].includes(mask.dtype)) {
      throw new KindlingError('only bool and floating types of key_padding_mask are supported', 'KD_DTYPE_MISMATCH');
    }
  }

  /**
   * One transformer decoder block: self-attention, attention over the encoder's output (memory),
   * then a feed-forward net, each with a residual connection and layer norm (before each block
   * when normFirst, after otherwise). TransformerDecoderLayer(dModel, nhead, dimFeedforward=2048,
   * dropout=0.1, activation='relu' | 'gelu' | fn, layerNormEps=1e-5, batchFirst=false,
   * normFirst=false, {bias=true, device, dtype}).
   * forward(tgt, memory, {tgtMask, memoryMask, tgtKeyPaddingMask, memoryKeyPaddingMask, tgtIsCausal,
   * memoryIsCausal}) (the isCausal flags, as MultiheadAttention's, stand for a causal mask when none is given).
   */
  class TransformerDecoderLayer extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('TransformerDecoderLayer()', args,
        ['dModel', 'nhead', 'dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst'],
        { dimFeedforward: 2048, dropout: 0.1, activation: 'relu', layerNormEps: 1e-5, batchFirst: false, normFirst: false, bias: true, device: null, dtype: null });
      const f = factory(o);
      const act = activationOf(o.activation);
      this.selfAttn = new nn.MultiheadAttention(o.dModel, o.nhead, { dropout: o.dropout, bias: o.bias, batchFirst: o.batchFirst, ...f });
      this.multiheadAttn = new nn.MultiheadAttention(o.dModel, o.nhead, { dropout: o.dropout, bias: o.bias, batchFirst: o.batchFirst, ...f });
      this.linear1 = new nn.Linear(o.dModel, o.dimFeedforward, { bias: o.bias, ...f });
      this.dropout = new nn.Dropout(o.dropout);
      this.linear2 = new nn.Linear(o.dimFeedforward, o.dModel, { bias: o.bias, ...f });
      this.normFirst = o.normFirst;
      this.norm1 = new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, bias: o.bias, ...f });
      this.norm2 = new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, bias: o.bias, ...f });
      this.norm3 = new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, bias: o.bias, ...f });
      this.dropout1 = new nn.Dropout(o.dropout);
      this.dropout2 = new nn.Dropout(o.dropout);
      this.dropout3 = new nn.Dropout(o.dropout);
      this.activation = act; // a module given as the activation is a submodule, as in PyTorch
    }

    forward(tgt, memory, ...rest) {
      const o = parseArgs('TransformerDecoderLayer.forward()', rest, ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask'],
        { tgtMask: null, memoryMask: null, tgtKeyPaddingMask: null, memoryKeyPaddingMask: null, tgtIsCausal: false, memoryIsCausal: false });
      const sa = (x) => this.dropout1(this.selfAttn(x, x, x, {
        attnMask: o.tgtMask, keyPaddingMask: o.tgtKeyPaddingMask, needWeights: false, isCausal: o.tgtIsCausal,
      })[0]);
      const mha = (x) => this.dropout2(this.multiheadAttn(x, memory, memory, {
        attnMask: o.memoryMask, keyPaddingMask: o.memoryKeyPaddingMask, needWeights: false, isCausal: o.memoryIsCausal,
      })[0]);
      const ff = (x) => this.dropout3(this.linear2(this.dropout(this.activation(this.linear1(x)))));
      let x = tgt;
      if (this.normFirst) {
        x = x.add(sa(this.norm1(x)));
        x = x.add(mha(this.norm2(x)));
        x = x.add(ff(this.norm3(x)));
      } else {
        x = this.norm1(x.add(sa(x)));
        x = this.norm2(x.add(mha(x)));
        x = this.norm3(x.add(ff(x)));
      }
      return x;
    }
  }

  function checkLayers(numLayers, what) {
    if (!Number.isInteger(numLayers) || numLayers < 0) {
      throw new KindlingError(`${what}: num_layers must be a non-negative integer, got ${numLayers}`, 'KD_INVALID_ARGUMENT');
    }
  }

  /**
   * A stack of numLayers deep copies of encoderLayer, then norm (a module, or null).
   * TransformerEncoder(encoderLayer, numLayers, norm=null, enableNestedTensor=true, maskCheck=true).
   * forward(src, {mask, srcKeyPaddingMask}).
   */
  class TransformerEncoder extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('TransformerEncoder()', args, ['encoderLayer', 'numLayers', 'norm', 'enableNestedTensor', 'maskCheck'],
        { norm: null, enableNestedTensor: true, maskCheck: true });
      if (!(o.encoderLayer instanceof Module)) throw new TypeError('TransformerEncoder(): encoderLayer must be a kd.nn.Module');
      checkLayers(o.numLayers, 'TransformerEncoder()');
      this.layers = new nn.ModuleList(Array.from({ length: o.numLayers }, () => deepCopy(o.encoderLayer)));
      this.numLayers = o.numLayers;
      this.registerModule('norm', o.norm);
      this.enableNestedTensor = o.enableNestedTensor;
      this.maskCheck = o.maskCheck;
    }

    forward(src, ...rest) {
      const o = parseArgs('TransformerEncoder.forward()', rest, ['mask', 'srcKeyPaddingMask'], { mask: null, srcKeyPaddingMask: null, isCausal: false });
      checkPaddingMask(o.srcKeyPaddingMask);
      const lengths = this._nestedLengths(src, o);
      let kpm = o.srcKeyPaddingMask;
      if (lengths) { // the nested tensor's sequences: the first lengths[i] positions of each
        const S = src.shape[1];
        kpm = kd.arange(S, { device: src.device }).expand([lengths.length, S]).ge(kd.tensor(lengths, { device: src.device }).unsqueeze(1));
      }
      let out = src;
      for (const layer of this.layers) out = layer(out, { srcMask: o.mask, srcKeyPaddingMask: kpm, isCausal: o.isCausal });
      // padded back with zeros to the longest sequence
      if (lengths) out = out.maskedFill(kpm.unsqueeze(-1), 0).narrow(1, 0, Math.max(0, ...lengths));
      return this.norm ? this.norm(out) : out;
    }

    /**
     * Note [Nested-tensor inference]: in eval mode without autograd, PyTorch 1.13's
     * TransformerEncoder runs its layers on a nested tensor of the unpadded positions when the
     * conditions of its fast path hold (checked here in its order); its result, padded back, is
     * zero at the padded positions and as long as the longest sequence. kindling computes every
     * position, then gives that result: the sequence lengths when the path applies, else null.
     */
    _nestedLengths(src, o) {
      const first = this.layers.length ? this.layers.at(0) : null;
      const kpm = o.srcKeyPaddingMask;
      if (!(first instanceof nn.TransformerEncoderLayer) || first.normFirst || first.training) return null;
      const sa = first.selfAttn;
      const act = first.activation || first._act; // a module, or the function of a string or callable
      const reluOrGelu = first.activationName === 'relu' || first.activationName === 'gelu' || act === F.relu || act === F.gelu
        || act instanceof nn.ReLU || act instanceof nn.GELU;
      if (!sa.batchFirst || !sa.qkvSameEmbedDim || !reluOrGelu || first.norm1.eps !== first.norm2.eps) return null;
      if (src.ndim !== 3 || !this.enableNestedTensor || kpm === null || kpm === undefined) return null;
      if (o.mask !== null && o.mask !== undefined) return null;
      if (sa.numHeads % 2 === 1 || kd.isAutocastEnabled('cuda')) return null;
      const tensors = [src, sa.inProjWeight, sa.inProjBias, sa.outProj.weight, sa.outProj.bias, first.norm1.weight, first.norm1.bias,
        first.norm2.weight, first.norm2.bias, first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias];
      if (kd.isGradEnabled() && tensors.some((t) => t && t.requiresGrad)) return null;
      const rows = kd.tidy(() => (kpm.dtype === 'bool' ? kpm : kpm.ne(0)).cpu().arraySync());
      const lengths = rows.map((r) => r.filter((padded) => !padded).length);
      // the unpadded positions must come first (maskCheck); without the check, PyTorch takes the
      // first lengths[i] positions of each sequence, wherever the padding was
      if (this.maskCheck && rows.some((r, i) => r.slice(0, lengths[i]).some((padded) => padded))) return null;
      return lengths;
    }
  }

  /**
   * A stack of numLayers deep copies of decoderLayer, then norm (a module, or null).
   * TransformerDecoder(decoderLayer, numLayers, norm=null).
   * forward(tgt, memory, {tgtMask, memoryMask, tgtKeyPaddingMask, memoryKeyPaddingMask}).
   */
  class TransformerDecoder extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('TransformerDecoder()', args, ['decoderLayer', 'numLayers', 'norm'], { norm: null });
      if (!(o.decoderLayer instanceof Module)) throw new TypeError('TransformerDecoder(): decoderLayer must be a kd.nn.Module');
      checkLayers(o.numLayers, 'TransformerDecoder()');
      this.layers = new nn.ModuleList(Array.from({ length: o.numLayers }, () => deepCopy(o.decoderLayer)));
      this.numLayers = o.numLayers;
      this.registerModule('norm', o.norm);
    }

    forward(tgt, memory, ...rest) {
      const o = parseArgs('TransformerDecoder.forward()', rest, ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask'],
        { tgtMask: null, memoryMask: null, tgtKeyPaddingMask: null, memoryKeyPaddingMask: null, tgtIsCausal: false, memoryIsCausal: false });
      let out = tgt;
      for (const layer of this.layers) out = layer(out, memory, o);
      return this.norm ? this.norm(out) : out;
    }
  }

  /**
   * The encoder-decoder transformer of "Attention Is All You Need". Transformer(dModel=512,
   * nhead=8, numEncoderLayers=6, numDecoderLayers=6, dimFeedforward=2048, dropout=0.1,
   * activation='relu', customEncoder=null, customDecoder=null, layerNormEps=1e-5,
   * batchFirst=false, normFirst=false, {device, dtype}). Every parameter with more than one
   * dimension is initialised with xavierUniform_.
   * forward(src, tgt, {srcMask, tgtMask, memoryMask, srcKeyPaddingMask, tgtKeyPaddingMask, memoryKeyPaddingMask}).
   */
  class Transformer extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Transformer()', args,
        ['dModel', 'nhead', 'numEncoderLayers', 'numDecoderLayers', 'dimFeedforward', 'dropout', 'activation',
          'customEncoder', 'customDecoder', 'layerNormEps', 'batchFirst', 'normFirst'],
        { dModel: 512, nhead: 8, numEncoderLayers: 6, numDecoderLayers: 6, dimFeedforward: 2048, dropout: 0.1, activation: 'relu',
          customEncoder: null, customDecoder: null, layerNormEps: 1e-5, batchFirst: false, normFirst: false, device: null, dtype: null });
      const f = factory(o);
      const layerArgs = [o.dModel, o.nhead, o.dimFeedforward, o.dropout, o.activation, o.layerNormEps, o.batchFirst, o.normFirst, f];
      // the stacks copy a template layer, whose tensors are then freed
      const stack = (Stack, Layer, n) => {
        const layer = new Layer(...layerArgs);
        const s = new Stack(layer, n, new nn.LayerNorm(o.dModel, { eps: o.layerNormEps, ...f }));
        kd.dispose([...layer.parameters(), ...layer.buffers()]);
        return s;
      };
      this.encoder = o.customEncoder || stack(TransformerEncoder, nn.TransformerEncoderLayer, o.numEncoderLayers);
      this.decoder = o.customDecoder || stack(TransformerDecoder, TransformerDecoderLayer, o.numDecoderLayers);
      this.resetParameters();
      this.dModel = o.dModel;
      this.nhead = o.nhead;
      this.batchFirst = o.batchFirst;
    }

    resetParameters() {
      for (const p of this.parameters()) if (p.ndim > 1) nn.init.xavierUniform_(p);
    }

    forward(src, tgt, ...rest) {
      const o = parseArgs('Transformer.forward()', rest,
        ['srcMask', 'tgtMask', 'memoryMask', 'srcKeyPaddingMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask'],
        { srcMask: null, tgtMask: null, memoryMask: null, srcKeyPaddingMask: null, tgtKeyPaddingMask: null, memoryKeyPaddingMask: null,
          tgtIsCausal: false, memoryIsCausal: false });
      const batched = src.ndim === 3;
      const b = this.batchFirst ? 0 : 1;
      if (batched && src.shape[b] !== tgt.shape[b]) {
        throw new KindlingError('the batch number of src and tgt must be equal', 'KD_SHAPE_MISMATCH');
      }
      if (src.shape[src.ndim - 1] !== this.dModel || tgt.shape[tgt.ndim - 1] !== this.dModel) {
        throw new KindlingError('the feature number of src and tgt must be equal to d_model', 'KD_SHAPE_MISMATCH');
      }
      const memory = this.encoder(src, { mask: o.srcMask, srcKeyPaddingMask: o.srcKeyPaddingMask });
      return this.decoder(tgt, memory, {
        tgtMask: o.tgtMask, memoryMask: o.memoryMask, tgtKeyPaddingMask: o.tgtKeyPaddingMask, memoryKeyPaddingMask: o.memoryKeyPaddingMask,
        tgtIsCausal: o.tgtIsCausal, memoryIsCausal: o.memoryIsCausal,
      });
    }

    /**
     * A [sz, sz] float mask for causal attention: -Infinity above the diagonal, 0 elsewhere.
     * generateSquareSubsequentMask(sz, device='cpu') or (sz, {device, dtype}).
     */
    static generateSquareSubsequentMask(sz, options = 'cpu') {
      const o = typeof options === 'string' ? { device: options } : { device: 'cpu', ...options };
      if (!Number.isInteger(sz) || sz < 0) throw new KindlingError(`generate_square_subsequent_mask(): sz must be a non-negative integer, got ${sz}`, 'KD_INVALID_ARGUMENT');
      return kd.tidy(() => kd.full([sz, sz], -Infinity, { device: o.device, dtype: o.dtype || undefined }).triu(1));
    }
  }

  Object.assign(nn, { Transformer, TransformerEncoder, TransformerDecoder, TransformerDecoderLayer });
};
