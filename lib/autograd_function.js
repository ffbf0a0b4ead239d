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
  // The place of a saved tensor in a recorded ctx: the node holds the tensor (See Note [Tensors a
  // custom node saves] in src/napi/autograd.c), the ctx only this.
  class SavedSlot { constructor(i) { this.i = i; } }
  const hasTensor = (v, depth = 0) => v instanceof Tensor || (Array.isArray(v) && depth < 4 && v.some((e) => hasTensor(e, depth + 1)));

  class FunctionCtx {
    constructor(needsInputGrad) {
      this.needsInputGrad = needsInputGrad;
      this._saved = null;
      this._nonDiff = new Set();
      this._unpacked = null; // during backward: per slot, a Tensor or why it cannot be had
      this.materializeGrads = true;
    }
    /** Saves tensors for backward (checked against in-place changes when read back). */
    saveForBackward(...tensors) { this._saved = tensors; }
    /** The tensors given to saveForBackward. */
    get savedTensors() { return (this._saved || []).map((t) => this._resolve(t)); }
    /** Marks outputs that get no gradient (e.g. indices). */
    markNonDifferentiable(...tensors) { for (const t of tensors) this._nonDiff.add(t); }
    /** Whether gradients of outputs that got none are passed as zeros (default) or null. */
    setMaterializeGrads(v) { this.materializeGrads = !!v; }

    _resolve(v) {
      if (v instanceof SavedSlot) {
        if (this._unpacked === null) throw new KindlingError('saved tensors can be read in backward only', 'KD_INVALID_ARGUMENT');
        const t = this._unpacked[v.i];
        if (typeof t === 'string') throw new KindlingError(t, 'KD_INVALID_ARGUMENT');
        return t;
      }
      return Array.isArray(v) && hasTensorSlot(v) ? v.map((e) => this._resolve(e)) : v;
    }

    // Replaces the tensors this ctx holds (saved, then those among its properties, also inside
    // arrays) by their places; returns them, and how many of them were saved (version-checked).
    _moveTensorsOut() {
      const tensors = [];
      const slot = (v, depth) => {
        if (v instanceof Tensor) return new SavedSlot(tensors.push(v) - 1);
        return Array.isArray(v) && depth < 4 ? v.map((e) => slot(e, depth + 1)) : v;
      };
      if (this._saved) this._saved = this._saved.map((v) => slot(v, 4));
      const nchecked = tensors.length;
      for (const k of Object.keys(this)) {
        if (k.startsWith('_') || !hasTensor(this[k])) continue;
        const place = slot(this[k], 0);
        Object.defineProperty(this, k, {
          get() { return this._resolve(place); },
          set(value) { Object.defineProperty(this, k, { value, writable: true, enumerable: true, configurable: true }); },
          enumerable: true,
          configurable: true,
        });
      }
      return [tensors, nchecked];
    }
  }
  const hasTensorSlot = (v, depth = 0) => depth < 5 && v.some((e) => e instanceof SavedSlot || (Array.isArray(e) && hasTensorSlot(e, depth + 1)));

  // One gradient as a backward returned it: a Tensor or null; for a Tensor[] argument an array of them (or null).
  const gradOk = (g, list) => g === null || g === undefined ||
    (list ? Array.isArray(g) && g.every((e) => gradOk(e, false)) : g instanceof Tensor);

  const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'];
  /**
   * Connects `outs` (the floating ones not marked non-differentiable) to one new graph node named
   * `name` with an edge per tensor in `args` (Tensor[] arguments: one per element). The tensors
   * ctx holds move into the node (See Note [Tensors a custom node saves] in src/napi/autograd.c).
   * The node's backward calls callBackward(grads) with one gradient per connected output (zeros,
   * or null without materializeGrads, for those that got none) and expects one gradient (or null)
   * per argument (with `lists`, an array of them for a Tensor[] argument; else arrays get none).
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
    const [saved, nchecked] = ctx._moveTensorsOut();
    const tensorArgs = args.map((a) => (isList(a) ? a.map((e) => e instanceof Tensor && e.requiresGrad) : a instanceof Tensor));
    args = null; // the node holds the tensors it needs; the backward needs only which arguments were tensors
    const backward = (gh, savedHandles) => {
      const grads = gh.map((h, i) => {
        if (h !== null) return new Tensor(h);
        return ctx.materializeGrads ? kd.zeros(shapes[i][0], { dtype: shapes[i][1], device: shapes[i][2] }) : null;
      });
      const unpacked = savedHandles.map((h) => (typeof h === 'string' ? h : new Tensor(h)));
      ctx._unpacked = unpacked;
      const out = [];
      try {
        let r = callBackward(grads);
        if (!Array.isArray(r)) {
          if (r !== null && r !== undefined && !(r instanceof Tensor)) {
            throw typeError(`function ${name} returned ${typeof r === 'object' ? 'an object' : `a ${typeof r}`} where it must return one gradient (a Tensor or null) per input, or an array of them`);
          }
          r = [r];
        }
        if (r.length < tensorArgs.filter((a) => a !== false).length && r.length !== tensorArgs.length) {
          throw new KindlingError(`function ${name} returned an incorrect number of gradients (expected ${tensorArgs.length}, got ${r.length})`, 'KD_INVALID_ARGUMENT');
        }
        tensorArgs.forEach((a, i) => {
          if (!gradOk(r[i], Array.isArray(a))) {
            throw typeError(`function ${name} returned an invalid gradient at index ${i}: expected ${Array.isArray(a) ? 'an array of Tensors (or null) for a Tensor[] argument' : 'a Tensor or null'}`);
          }
          if (Array.isArray(a)) {
            a.forEach((isT, j) => {
              const g = Array.isArray(r[i]) ? r[i][j] : null;
              out.push(isT && g instanceof Tensor ? g._h : null);
            });
          } else {
            out.push(a && ctx.needsInputGrad[i] && r[i] instanceof Tensor ? r[i]._h : null);
          }
        });
      } finally {
        ctx._unpacked = null;
        const returned = new Set(out);
        for (const t of unpacked) if (t instanceof Tensor && !returned.has(t._h)) t.dispose();
      }
      return out;
    };
    A.makeCustomNode(name, inputs.map((a) => (a ? a._h : null)), diffOuts.map((o) => o._h), backward, saved.map((t) => t._h), nchecked);
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
