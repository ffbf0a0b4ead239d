// vit.js - torchvision 0.14's VisionTransformer (torchvision/models/vision_transformer.py) in
// kindling: the patchify convolution conv_proj, class_token, encoder.pos_embedding,
// encoder.layers.encoder_layer_N.{ln_1, self_attention (nn.MultiheadAttention, batch first),
// ln_2, mlp.0 / mlp.3}, encoder.ln (LayerNorm eps 1e-6), heads.head (heads.pre_logits + Tanh
// when representationSize is given), under torchvision's names. vitB16 ... vitL32 are
// torchvision's vit_b_16 ... vit_l_32 configurations; VisionTransformer takes any other.
'use strict';

module.exports = function makeViT(kd, { Activation, Chain, runChain, disposeAfter }) {
  const { nn } = kd;
  const layerNorm = (d) => new nn.LayerNorm(d, { eps: 1e-6 });

  /** torchvision's EncoderBlock: x + attn(ln_1(x)), then + mlp(ln_2(.)). */
  class EncoderBlock extends nn.Module {
    constructor(numHeads, hiddenDim, mlpDim, dropout, attentionDropout) {
      super();
      this.numHeads = numHeads;
      this.ln_1 = layerNorm(hiddenDim);
      this.self_attention = new nn.MultiheadAttention(hiddenDim, numHeads, { dropout: attentionDropout, batchFirst: true });
      this.dropout = new nn.Dropout(dropout);
      this.ln_2 = layerNorm(hiddenDim);
      // torchvision's MLPBlock: Linear, GELU, Dropout, Linear, Dropout (keys mlp.0, mlp.3)
      this.mlp = new Chain(new nn.Linear(hiddenDim, mlpDim), new Activation('gelu'), new nn.Dropout(dropout),
        new nn.Linear(mlpDim, hiddenDim), new nn.Dropout(dropout));
    }
    forward(input) {
      if (input.ndim !== 3) throw new RangeError(`Expected (batch_size, seq_length, hidden_dim) got [${input.shape}]`);
      const h = this.ln_1(input);
      const [a] = this.self_attention(h, h, h, { needWeights: false });
      h.dispose();
      const x = disposeAfter(disposeAfter(a, (t) => this.dropout(t)), (t) => t.add(input));
      const y = runChain([this.ln_2, this.mlp], x);
      const out = y.add(x);
      y.dispose();
      x.dispose();
      return out;
    }
  }

  /** torchvision's Encoder: + pos_embedding, dropout, the blocks, the final LayerNorm. */
  class Encoder extends nn.Module {
    constructor(seqLength, numLayers, numHeads, hiddenDim, mlpDim, dropout, attentionDropout) {
      super();
      this.pos_embedding = new nn.Parameter(kd.empty([1, seqLength, hiddenDim]));
      kd.noGrad(() => nn.init.normal_(this.pos_embedding, 0, 0.02));
      this.dropout = new nn.Dropout(dropout);
      const blocks = {};
      for (let i = 0; i < numLayers; i++) blocks[`encoder_layer_${i}`] = new EncoderBlock(numHeads, hiddenDim, mlpDim, dropout, attentionDropout);
      this.layers = new Chain(blocks);
      this.ln = layerNorm(hiddenDim);
    }
    forward(input) {
      if (input.ndim !== 3) throw new RangeError(`Expected (batch_size, seq_length, hidden_dim) got [${input.shape}]`);
      return runChain([(t) => t.add(this.pos_embedding), this.dropout, this.layers, this.ln], input);
    }
  }

  class VisionTransformer extends nn.Module {
    /**
     * options: imageSize (224), patchSize, numLayers, numHeads, hiddenDim, mlpDim (required),
     * dropout (0), attentionDropout (0), numClasses (1000), representationSize (null).
     */
    constructor({ imageSize = 224, patchSize, numLayers, numHeads, hiddenDim, mlpDim, dropout = 0, attentionDropout = 0, numClasses = 1000, representationSize = null } = {}) {
      super();
      for (const [k, v] of Object.entries({ imageSize, patchSize, numLayers, numHeads, hiddenDim, mlpDim, numClasses })) {
        if (!Number.isInteger(v) || v <= 0) throw new TypeError(`VisionTransformer: ${k} must be a positive integer, got ${v}`);
      }
      if (imageSize % patchSize !== 0) throw new RangeError('Input shape indivisible by patch size!');
      this.imageSize = imageSize;
      this.patchSize = patchSize;
      this.hiddenDim = hiddenDim;
      this.conv_proj = new nn.Conv2d(3, hiddenDim, patchSize, { stride: patchSize });
      this.class_token = new nn.Parameter(kd.zeros([1, 1, hiddenDim]));
      this.seqLength = (imageSize / patchSize) ** 2 + 1;
      this.encoder = new Encoder(this.seqLength, numLayers, numHeads, hiddenDim, mlpDim, dropout, attentionDropout);
      const heads = representationSize == null
        ? { head: new nn.Linear(hiddenDim, numClasses) }
        : { pre_logits: new nn.Linear(hiddenDim, representationSize), act: new nn.Tanh(), head: new nn.Linear(representationSize, numClasses) };
      this.heads = new Chain(heads);
    }

    /** [N, 3, H, W] -> [N, (H/p)(W/p), hidden]: the patch embeddings. */
    processInput(x) {
      if (x.ndim !== 4) throw new RangeError(`VisionTransformer: expected an input [N, 3, H, W], got [${x.shape}]`);
      const [n, , h, w] = x.shape;
      if (h !== this.imageSize) throw new RangeError(`Wrong image height! Expected ${this.imageSize} but got ${h}!`);
      if (w !== this.imageSize) throw new RangeError(`Wrong image width! Expected ${this.imageSize} but got ${w}!`);
      const p = this.patchSize;
      const y = this.conv_proj(x);
      const out = y.reshape([n, this.hiddenDim, (h / p) * (w / p)]).permute([0, 2, 1]);
      y.dispose();
      return out;
    }

    forward(x) {
      const patches = this.processInput(x);
      const cls = this.class_token.expand([patches.shape[0], -1, -1]);
      const tokens = kd.cat([cls, patches], 1);
      cls.dispose();
      patches.dispose();
      const encoded = disposeAfter(tokens, (t) => this.encoder(t));
      const first = disposeAfter(encoded, (t) => t.select(1, 0));
      return disposeAfter(first, (t) => this.heads(t));
    }
  }

  /** torchvision's configurations: [patchSize, numLayers, numHeads, hiddenDim, mlpDim]. */
  const CONFIGS = {
    vitB16: [16, 12, 12, 768, 3072],
    vitB32: [32, 12, 12, 768, 3072],
    vitL16: [16, 24, 16, 1024, 4096],
    vitL32: [32, 24, 16, 1024, 4096],
  };
  const builders = {};
  for (const [name, [patchSize, numLayers, numHeads, hiddenDim, mlpDim]] of Object.entries(CONFIGS)) {
    builders[name] = (options = {}) => new VisionTransformer({ patchSize, numLayers, numHeads, hiddenDim, mlpDim, ...options });
  }

  return { VisionTransformer, EncoderBlock, Encoder, ...builders };
};
