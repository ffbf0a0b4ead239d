// model.js - word_language_model/model.py of pytorch/examples, line for line: RNNModel (an
// embedding, a multi-layer RNN_TANH / RNN_RELU / LSTM / GRU and a linear decoder, optionally
// with tied weights), PositionalEncoding and TransformerModel (an nn.Transformer whose encoder
// runs with a causal mask; its decoder is replaced by the linear decoder). torch.save(model) and
// torch.load pickle the whole module; saveModel / loadModel write a checkpoint of its state dict,
// class and constructor arguments (kd.saveCheckpointSync) and rebuild it from them.
'use strict';

const kd = require('../../..');

const nn = kd.nn;
const F = kd.nn.functional;
const CLASSES = () => ({ RNNModel, TransformerModel });

/** Keeps a model's class and constructor arguments for saveModel (not a property PyTorch has). */
function recordArguments(model, args) {
  Object.defineProperty(model, '_constructorArguments', { value: [...args], enumerable: false });
}

/** Container module with an encoder, a recurrent module, and a decoder. */
class RNNModel extends nn.Module {
  constructor(rnnType, ntoken, ninp, nhid, nlayers, dropout = 0.5, tieWeights = false) {
    super();
    recordArguments(this, arguments);
    this.ntoken = ntoken;
    this.drop = new nn.Dropout(dropout);
    this.encoder = new nn.Embedding(ntoken, ninp);
    if (['LSTM', 'GRU'].includes(rnnType)) {
      this.rnn = new nn[rnnType](ninp, nhid, nlayers, { dropout });
    } else {
      const nonlinearity = { RNN_TANH: 'tanh', RNN_RELU: 'relu' }[rnnType];
      if (nonlinearity === undefined) {
        throw new Error(`An invalid option for \`--model\` was supplied,
                                 options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']`);
      }
      this.rnn = new nn.RNN(ninp, nhid, nlayers, { nonlinearity, dropout });
    }
    this.decoder = new nn.Linear(nhid, ntoken);

    // Optionally tie weights as in:
    // "Using the Output Embedding to Improve Language Models" (Press & Wolf 2016)
    // https://arxiv.org/abs/1608.05859
    // and
    // "Tying Word Vectors and Word Classifiers: A Loss Framework for Language Modeling" (Inan et al. 2016)
    // https://arxiv.org/abs/1611.01462
    if (tieWeights) {
      if (nhid !== ninp) throw new Error('When using the tied flag, nhid must be equal to emsize');
      this.decoder.weight = this.encoder.weight;
    }

    this.initWeights();

    this.rnnType = rnnType;
    this.nhid = nhid;
    this.nlayers = nlayers;
  }

  initWeights() {
    const initrange = 0.1;
    nn.init.uniform_(this.encoder.weight, -initrange, initrange);
    nn.init.zeros_(this.decoder.bias);
    nn.init.uniform_(this.decoder.weight, -initrange, initrange);
  }

  forward(input, hidden) {
    const emb = this.drop(this.encoder(input));
    let output;
    [output, hidden] = this.rnn(emb, hidden);
    output = this.drop(output);
    let decoded = this.decoder(output);
    decoded = decoded.view(-1, this.ntoken);
    return [F.logSoftmax(decoded, { dim: 1 }), hidden];
  }

  initHidden(bsz) {
    const weight = this.parameters()[0];
    if (this.rnnType === 'LSTM') {
      return [weight.newZeros(this.nlayers, bsz, this.nhid),
        weight.newZeros(this.nlayers, bsz, this.nhid)];
    }
    return weight.newZeros(this.nlayers, bsz, this.nhid);
  }
}

/**
 * Inject some information about the relative or absolute position of the tokens in the sequence.
 * The positional encodings have the same dimension as the embeddings, so that the two can be summed.
 * Here, we use sine and cosine functions of different frequencies.
 *   PosEncoder(pos, 2i) = sin(pos/10000^(2i/d_model))
 *   PosEncoder(pos, 2i+1) = cos(pos/10000^(2i/d_model))
 *   where pos is the word position and i is the embed idx
 * Args:
 *   dModel: the embed dim (required).
 *   dropout: the dropout value (default=0.1).
 *   maxLen: the max. length of the incoming sequence (default=5000).
 * Examples:
 *   const posEncoder = new PositionalEncoding(dModel)
 */
class PositionalEncoding extends nn.Module {
  constructor(dModel, dropout = 0.1, maxLen = 5000) {
    super();
    this.dropout = new nn.Dropout({ p: dropout });

    const pe = kd.tidy(() => {
      const pe = kd.zeros(maxLen, dModel);
      const position = kd.arange(0, maxLen, { dtype: 'float32' }).unsqueeze(1);
      const divTerm = kd.exp(kd.arange(0, dModel, 2).float().mul(-Math.log(10000.0) / dModel));
      pe.indexPut_([kd.slice(), kd.slice(0, null, 2)], kd.sin(position.mul(divTerm)));
      pe.indexPut_([kd.slice(), kd.slice(1, null, 2)], kd.cos(position.mul(divTerm)));
      return pe.unsqueeze(0).transpose(0, 1);
    });
    this.registerBuffer('pe', pe);
  }

  /**
   * Inputs of forward function
   * Args:
   *   x: the sequence fed to the positional encoder model (required).
   * Shape:
   *   x: [sequence length, batch size, embed dim]
   *   output: [sequence length, batch size, embed dim]
   * Examples:
   *   const output = posEncoder(x)
   */
  forward(x) {
    x = x.add(this.pe.index([kd.slice(null, x.size(0)), kd.slice()]));
    return this.dropout(x);
  }
}

/** Container module with an encoder, a recurrent or transformer module, and a decoder. */
class TransformerModel extends nn.Transformer {
  constructor(ntoken, ninp, nhead, nhid, nlayers, dropout = 0.5) {
    super({ dModel: ninp, nhead, dimFeedforward: nhid, numEncoderLayers: nlayers });
    recordArguments(this, arguments);
    this.modelType = 'Transformer';
    this.srcMask = null;
    this.posEncoder = new PositionalEncoding(ninp, dropout);

    this.inputEmb = new nn.Embedding(ntoken, ninp);
    this.ninp = ninp;
    this.decoder = new nn.Linear(ninp, ntoken);

    this.initWeights();
  }

  _generateSquareSubsequentMask(sz) {
    return kd.log(kd.tril(kd.ones(sz, sz)));
  }

  initWeights() {
    const initrange = 0.1;
    nn.init.uniform_(this.inputEmb.weight, -initrange, initrange);
    nn.init.zeros_(this.decoder.bias);
    nn.init.uniform_(this.decoder.weight, -initrange, initrange);
  }

  forward(src, hasMask = true) {
    if (hasMask) {
      const device = src.device;
      if (this.srcMask === null || this.srcMask.size(0) !== src.size(0)) {
        const mask = this._generateSquareSubsequentMask(src.size(0)).to(device);
        this.srcMask = mask;
      }
    } else {
      this.srcMask = null;
    }

    src = this.inputEmb(src).mul(Math.sqrt(this.ninp));
    src = this.posEncoder(src);
    let output = this.encoder(src, { mask: this.srcMask });
    output = this.decoder(output);
    return F.logSoftmax(output, { dim: -1 });
  }
}

/** torch.save(model, path): the state dict, with what rebuilds the model. */
function saveModel(model, file) {
  kd.saveCheckpointSync({ class: model.constructor.name, arguments: model._constructorArguments, model }, file);
}

/** torch.load(path, map_location=device): the model saveModel wrote. */
function loadModel(file, { device = 'cpu' } = {}) {
  const saved = kd.loadCheckpointSync(file, { device });
  const Model = CLASSES()[saved.class];
  if (!Model) throw new Error(`${file} holds no model of this example (class '${saved.class}')`);
  const model = new Model(...saved.arguments).to(device);
  model.loadStateDict(saved.model);
  return model;
}

module.exports = { RNNModel, PositionalEncoding, TransformerModel, saveModel, loadModel };
