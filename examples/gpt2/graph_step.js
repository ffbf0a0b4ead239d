// graph_step.js - the one-token decode step of generation.js captured as a CUDA graph
// (kd.cuda.graph), so that each generated token is one graph launch: the cache is switched to
// fixed-shape decoding (KVCache.beginFixedShapeDecoding: the position lives on the device, the
// keys and values are written with indexCopy_, attention spans all maxLength positions with the
// unfilled ones masked), the step runs once eagerly (lazily made state), and is then captured
// from the same state. With feedback (greedy decoding) the step writes its argmax back into its
// own input ids, so a replay needs no host-to-device copy either.
'use strict';

const kd = require('../..');

class GraphedDecodeStep {
  /**
   * model, cache (filled by the prompt), B rows; pick(logits (B, vocab)) -> device tensors (what
   * the caller reads back); feedback: pick's first tensor (B) holds the next input ids; padding:
   * each row's left padding (number[]), or null.
   */
  constructor(model, cache, B, pick, { feedback = false, padding = null } = {}) {
    this.cache = cache;
    this.padding = padding;
    this.B = B;
    this.feedback = feedback;
    this.ids = kd.keep(kd.zeros([B, 1], { dtype: 'int64', device: cache.kv[0].device }));
    this.graph = new kd.cuda.CUDAGraph();
    this.outputs = null;
    this.body = () => kd.inferenceMode(() => kd.tidy(() => {
      const picked = pick(model(this.ids, cache, { lastOnly: true }).select(1, 0));
      if (feedback) this.ids.copy_(picked[0].view(B, 1));
      return picked;
    }));
  }

  /** Writes the next input ids (number[] of B) and the position (cache.length) to the device. */
  _setInputs(next) {
    kd.noGrad(() => this.ids.copy_(kd.tensor(next.map(BigInt), { dtype: 'int64' }).view(this.B, 1)));
    this.cache.beginFixedShapeDecoding(this.padding);
  }

  /**
   * Runs one step for the tokens `next` (the previous step's picks): the first call warms up
   * and captures, each call after that is one replay (the ids are written only without
   * feedback). Returns the step's output tensors (the graph's: valid until the next step).
   */
  step(next) {
    if (!this.outputs) {
      this._setInputs(next);
      kd.dispose(this.body()); // warm-up, then the same state again for the capture
      this._setInputs(next);
      this.outputs = kd.cuda.graph(this.graph, this.body);
      this._setInputs(next); // in case the capture ran its work
    } else if (!this.feedback) {
      kd.noGrad(() => this.ids.copy_(kd.tensor(next.map(BigInt), { dtype: 'int64' }).view(this.B, 1)));
    }
    this.graph.replay();
    this.cache.length += 1;
    return this.outputs;
  }

  /** Frees the graph, its outputs and the ids. */
  dispose() {
    if (this.outputs) kd.dispose(this.outputs);
    this.graph.reset();
    this.ids.dispose();
    this.outputs = null;
  }
}

module.exports = { GraphedDecodeStep };
