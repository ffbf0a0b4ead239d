// autograd_function.js - custom differentiable functions written in JS, as PyTorch's
// torch.autograd.Function:
//   class Exp extends kd.autograd.Function {
//     static forward(ctx, x) { const y = x.exp(); ctx.saveForBackward(y); return y; }
//     static backward(ctx, g) { const [y] = ctx.savedTensors; return g.mul(y); }
//   }
//   const y = Exp.apply(x);
// forward runs without recording; apply() connects its outputs to one graph node whose backward
// calls the class's backward (from the engine, on this thread) with one gradient per output
// (zeros for outputs that got none) and expects one gradient (or null) per forward argument.
'use strict';

const { KindlingError, typeError } = require('./errors');

module.exports = function installFunction(autograd, kd, Tensor, A) {
  class FunctionCtx {
    constructor(needsInputGrad) {
      this.needsInputGrad = needsInputGrad;
      this._saved = null;
      this._versions = null;
      this._nonDiff = new Set();
      this._released = false;
      this.materializeGrads = true;
    }
    /** Saves tensors for backward (checked against in-place changes when read back). */
    saveForBackward(...tensors) {
      this._saved = tensors;
      this._versions = tensors.map((t) => (t instanceof Tensor ? t.version : null));
    }
    /** The tensors given to saveForBackward. */
    get savedTensors() {
      if (this._released) {
        throw new KindlingError('Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Specify retainGraph: true if you need to backward through the graph a second time.', 'KD_INVALID_ARGUMENT');
      }
      const s = this._saved || [];
      s.forEach((t, i) => {
        if (t instanceof Tensor && t.version !== this._versions[i]) {
          throw new KindlingError(`one of the variables needed for gradient computation has been modified by an inplace operation: [${t.dtype} tensor [${t.shape.join(', ')}]] is at version ${t.version}; expected version ${this._versions[i]} instead.`, 'KD_INVALID_ARGUMENT');
        }
      });
      return s;
    }
    /** Marks outputs that get no gradient (e.g. indices). */
    markNonDifferentiable(...tensors) { for (const t of tensors) this._nonDiff.add(t); }
    /** Whether gradients of outputs that got none are passed as zeros (default) or null. */
    setMaterializeGrads(v) { this.materializeGrads = !!v; }
  }

  const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'];
  /**
   * Connects `outs` (the floating ones not marked non-differentiable) to one new graph node named
   * `name` with an edge per tensor in `args` (Tensor[] arguments: one per element). The node's
   * backward calls callBackward(grads) with one gradient per connected output (zeros, or null
   * without materializeGrads, for those that got none) and expects one gradient (or null) per
   * argument (with `lists`, an array of them for a Tensor[] argument; else arrays get none).
   * Used by kd.autograd.Function and by the ops of kd.library (lib/library.js).
   */
  function recordCustomNode(name, ctx, args, outs, callBackward, lists = false) {
    const isList = (a) => lists && Array.isArray(a);
    const diff = outs.map((o) => o instanceof Tensor && !ctx._nonDiff.has(o) && FLOATS.includes(o.dtype));
    const diffOuts = outs.filter((_, i) => diff[i]);
    const shapes = diffOuts.map((o) => [o.shape, o.dtype, o.device]);
    const inputs = [];
    for (const a of args) {
      if (isList(a)) for (const e of a) inputs.push(e instanceof Tensor ? e : null);
      else inputs.push(a instanceof Tensor ? a : null);
    }
    A.makeCustomNode(name, inputs.map((a) => (a ? a._h : null)), diffOuts.map((o) => o._h), (gh) => {
      const grads = gh.map((h, i) => {
        if (h !== null) return new Tensor(h);
        return ctx.materializeGrads ? kd.zeros(shapes[i][0], { dtype: shapes[i][1], device: shapes[i][2] }) : null;
      });
      let r = callBackward(grads);
      if (!Array.isArray(r)) r = [r];
      if (r.length < args.filter((a) => a instanceof Tensor || isList(a)).length && r.length !== args.length) {
        throw new KindlingError(`function ${name} returned an incorrect number of gradients (expected ${args.length}, got ${r.length})`, 'KD_INVALID_ARGUMENT');
      }
      const out = [];
      args.forEach((a, i) => {
        if (isList(a)) {
          a.forEach((e, j) => {
            const g = Array.isArray(r[i]) ? r[i][j] : null;
            out.push(e instanceof Tensor && e.requiresGrad && g instanceof Tensor ? g._h : null);
          });
        } else {
          out.push(a instanceof Tensor && ctx.needsInputGrad[i] && r[i] instanceof Tensor ? r[i]._h : null);
        }
      });
      return out;
    });
  }

  class Function {
    static forward() { throw new KindlingError(`${this.name}.forward is not implemented`, 'KD_NOT_SUPPORTED'); }
    static backward() { throw new KindlingError(`${this.name}.backward is not implemented`, 'KD_NOT_SUPPORTED'); }

    /** Runs forward and, when an input requires grad, records the node. */
    static apply(...args) {
      if (this === Function) throw typeError('call apply() on a subclass of kd.autograd.Function');
      const needs = args.map((a) => a instanceof Tensor && a.requiresGrad);
      const record = kd.isGradEnabled() && needs.some(Boolean);
      const ctx = new FunctionCtx(needs);
      const out = kd.noGrad(() => this.forward(ctx, ...args));
      if (!record) return out;
      const outs = Array.isArray(out) ? out.slice() : [out];
      // an input returned as is must become a new tensor (an alias) to get this node as grad_fn
      for (let i = 0; i < outs.length; i++) {
        if (args.includes(outs[i])) outs[i] = outs[i].detach();
      }
      recordCustomNode(`${this.name}Backward`, ctx, args, outs, (grads) => this.backward(ctx, ...grads));
      if (Array.isArray(out)) return outs;
      return outs[0];
    }
  }

  autograd.Function = Function;
  autograd._recordCustomNode = recordCustomNode;
  autograd.FunctionCtx = FunctionCtx;
};
