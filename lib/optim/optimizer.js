// optim/optimizer.js - the Optimizer base class of kd.optim (PyTorch's torch.optim.Optimizer):
// parameter groups (defaults filled in, `addParamGroup`), per-parameter state, `zeroGrad`,
// `step(closure)`, and `stateDict()` / `loadStateDict()` in PyTorch's layout: `state` keyed by
// parameter index (numbered through the groups in order), `paramGroups` holding the
// hyperparameters with `params` as those indices. State keys are camelCased (expAvg, expAvgSq,
// momentumBuffer, ...); `step` is a plain number. Subclasses implement `_stepGroup(group)`,
// which runs the fused update ops of src/ops/oplist/optim.js (one native call per group).
'use strict';

const { setOwn } = require('../own_keys');

module.exports = (kd) => {
  const { Tensor } = kd;
  const err = (msg) => new kd.KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const typeErr = (msg) => new kd.KindlingTypeError(msg, 'KD_INVALID_TYPE');

  class Optimizer {
    /** params: an iterable of tensors, or of parameter-group objects `{params, ...options}`. */
    constructor(params, defaults) {
      if (params instanceof Tensor) {
        throw typeErr('params argument given to the optimizer should be an iterable of Tensors or dicts, but got a Tensor');
      }
      if (params === null || params === undefined || typeof params[Symbol.iterator] !== 'function') {
        throw typeErr('params argument given to the optimizer should be an iterable of Tensors or dicts');
      }
      /** Default hyperparameters of new groups. */
      this.defaults = defaults;
      /** Per-parameter state: Map from the parameter tensor to an object. */
      this.state = new Map();
      /** Parameter groups: `{params: Tensor[], lr, ...}`; their hyperparameters may be changed. */
      this.paramGroups = [];
      const list = Array.from(params);
      if (list.length === 0) throw err('optimizer got an empty parameter list');
      const groups = list[0] instanceof Tensor ? [{ params: list }] : list;
      for (const g of groups) this.addParamGroup(g);
    }

    /** Adds a group `{params, ...options}`; options left out take the optimizer's defaults. */
    addParamGroup(group) {
      if (group === null || typeof group !== 'object' || group instanceof Tensor || Array.isArray(group)) {
        throw typeErr('param group must be an object with a params entry');
      }
      let params = group.params;
      if (params instanceof Tensor) params = [params];
      else if (params && typeof params[Symbol.iterator] === 'function') params = Array.from(params);
      else throw typeErr('optimizer parameters need to be organized in ordered collections');
      for (const p of params) {
        if (!(p instanceof Tensor)) throw typeErr('optimizer can only optimize Tensors');
        // differentiable optimizers update non-leaf tensors (PyTorch checks the defaults)
        if (!p.isLeaf && !p.retainsGrad && !this.defaults.differentiable) throw err("can't optimize a non-leaf Tensor");
      }
      if (new Set(params).size !== params.length) throw err('optimizer contains a parameter group with duplicate parameters');
      const g = { ...group, params };
      for (const [k, v] of Object.entries(this.defaults)) {
        if (g[k] === undefined) {
          if (v === REQUIRED) throw err(`parameter group didn't specify a value of required optimization parameter ${k}`);
          g[k] = Array.isArray(v) ? v.slice() : v;
        }
      }
      this._checkGroup(g);
      for (const other of this.paramGroups) {
        for (const p of other.params) {
          if (params.includes(p)) throw err('some parameters appear in more than one parameter group');
        }
      }
      this.paramGroups.push(g);
    }

    /** Subclasses validate hyperparameters here (PyTorch's ValueError messages). */
    _checkGroup(g) {}

    /** The update of a `differentiable: true` group, recorded by autograd (SGD, Adam and RMSprop
     * override it with ./differentiable.js's). */
    _stepDifferentiable() {
      throw err(`${this.constructor.name} has no differentiable option`);
    }

    /** The optimizer's state of p, made by init(p) the first time (for ./differentiable.js). */
    get _stateFn() { return (p, init) => this._stateOf(p, init); }

    /** Frees the state tensors (moment estimates, buffers) now instead of at collection; the
     * optimizer stays usable: a later step() starts its state afresh, as a new optimizer would.
     * The parameters are not touched (they belong to the model). Also `using opt = ...`. */
    dispose() {
      for (const st of this.state.values()) {
        for (const v of Object.values(st)) if (v instanceof Tensor) v.dispose();
      }
      this.state.clear();
    }

    [Symbol.dispose]() { this.dispose(); }

    /** PyTorch's repr: the class name and each group's hyperparameters, sorted by name. */
    toString() {
      const repr = (v) => {
        if (v === true) return 'True';
        if (v === false) return 'False';
        if (v === null || v === undefined) return 'None';
        if (Array.isArray(v)) return `(${v.map(repr).join(', ')})`;
        return String(v);
      };
      let s = `${this.constructor.name} (`;
      this.paramGroups.forEach((g, i) => {
        s += `\nParameter Group ${i}`;
        for (const k of Object.keys(g).filter((x) => x !== 'params').sort()) s += `\n    ${k}: ${repr(g[k])}`;
      });
      return `${s}\n)`;
    }

    /** Resets the gradients: to null (setToNone, the default) or to zeros in place. */
    zeroGrad({ setToNone = true } = {}) {
      kd.noGrad(() => {
        for (const g of this.paramGroups) {
          for (const p of g.params) {
            const grad = p.grad;
            if (grad === null) continue;
            if (setToNone) p.grad = null;
            else {
              if (grad.gradFn !== null) grad.detach_();
              else grad.requiresGrad = false;
              grad.zero_();
            }
            grad.dispose();
          }
        }
      });
    }

    /** One optimization step over every parameter with a gradient. With a closure (which
     * re-evaluates the model and returns the loss), runs it with gradients enabled first and
     * returns its result. */
    step(closure) {
      let loss;
      if (closure !== undefined && closure !== null) {
        if (typeof closure !== 'function') throw typeErr('step(closure): closure must be a function');
        loss = kd.enableGrad(closure);
      }
      kd.noGrad(() => {
        for (const g of this.paramGroups) {
          const params = [];
          const grads = [];
          for (const p of g.params) {
            const gr = p.grad;
            if (gr === null) continue;
            params.push(p);
            grads.push(gr);
          }
          if (params.length === 0) continue;
          try {
            if (g.differentiable) {
              // recorded by autograd: PyTorch's update written with ops, gradients enabled
              kd.enableGrad(() => this._stepDifferentiable(g, params, grads));
            } else this._stepGroup(g, params, grads);
          } finally {
            for (const gr of grads) gr.dispose();
          }
          // State made by this step (momentum buffers, ...) outlives an enclosing kd.tidy.
          for (const p of params) {
            const s = this.state.get(p);
            if (s) for (const v of Object.values(s)) if (v instanceof kd.Tensor) kd.keep(v);
          }
        }
      });
      return loss;
    }

    /** State of p, created by `init(p)` the first time. */
    _stateOf(p, init) {
      let s = this.state.get(p);
      if (s === undefined || Object.keys(s).length === 0) {
        s = init(p);
        this.state.set(p, s);
      }
      return s;
    }

    /** Runs fn(indices) once per set of parameters sharing `keyOf(state)` (a step count). */
    static _partition(params, keyOf) {
      const parts = new Map();
      params.forEach((p, i) => {
        const k = keyOf(p);
        let a = parts.get(k);
        if (!a) parts.set(k, (a = []));
        a.push(i);
      });
      return parts;
    }

    /** `{state, paramGroups}` in PyTorch's layout (tensors are the optimizer's own, not copies). */
    stateDict() {
      const index = new Map();
      let next = 0;
      const paramGroups = this.paramGroups.map((g) => {
        const packed = {};
        for (const [k, v] of Object.entries(g)) {
          if (k !== 'params') setOwn(packed, k, Array.isArray(v) ? v.slice() : v); // See Note [Keys from files]
        }
        packed.params = g.params.map((p) => {
          if (!index.has(p)) index.set(p, next++);
          return index.get(p);
        });
        return packed;
      });
      const state = {};
      for (const [p, s] of this.state) {
        if (index.has(p)) state[index.get(p)] = { ...s };
      }
      return { state, paramGroups };
    }

    /** Loads a stateDict() (a copy is made: state tensors are cloned, cast to their
     * parameter's dtype and device). */
    loadStateDict(sd) {
      if (sd === null || typeof sd !== 'object' || !Array.isArray(sd.paramGroups) || typeof sd.state !== 'object') {
        throw typeErr('loadStateDict() expects an object {state, paramGroups}');
      }
      const saved = sd.paramGroups;
      if (saved.length !== this.paramGroups.length) throw err('loaded state dict has a different number of parameter groups');
      saved.forEach((sg, i) => {
        if (!Array.isArray(sg.params) || sg.params.length !== this.paramGroups[i].params.length) {
          throw err("loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
        }
      });
      const byIndex = new Map();
      saved.forEach((sg, i) => sg.params.forEach((id, j) => byIndex.set(id, this.paramGroups[i].params[j])));
      // Keys come from a file (a checkpoint): See Note [Keys from files] in lib/own_keys.js.
      const state = new Map();
      kd.noGrad(() => {
        for (const [id, s] of Object.entries(sd.state)) {
          const p = byIndex.get(Number(id));
          if (p === undefined) continue;
          const ns = {};
          for (const [k, v] of Object.entries(s)) {
            if (v instanceof Tensor) {
              setOwn(ns, k, kd.keep(k === 'step' ? v.clone() : v.to({ dtype: p.dtype, device: p.device, copy: true })));
            } else setOwn(ns, k, Array.isArray(v) ? v.slice() : v);
          }
          state.set(p, ns);
        }
      });
      this.state = state;
      this.paramGroups = this.paramGroups.map((g, i) => {
        const ng = { params: g.params };
        for (const [k, v] of Object.entries(saved[i])) if (k !== 'params') setOwn(ng, k, Array.isArray(v) ? v.slice() : v);
        return ng;
      });
    }
  }

  const REQUIRED = Symbol('required');
  Optimizer.REQUIRED = REQUIRED;

  /** Reads a number option (with its PyTorch range check). */
  Optimizer.num = (v, name) => {
    if (typeof v !== 'number' || Number.isNaN(v)) throw typeErr(`${name} must be a number`);
    return v;
  };
  /** Checks that the group's lr, eps and weightDecay (those it has) are >= 0, with PyTorch's
   * messages. */
  Optimizer.checkNonNegative = (g) => {
    const what = { lr: 'learning rate', eps: 'epsilon value', weightDecay: 'weight_decay value' };
    for (const [k, name] of Object.entries(what)) {
      if (k in g && !(Optimizer.num(g[k], k) >= 0)) throw err(`Invalid ${name}: ${g[k]}`);
    }
  };
  /** Checks `betas` (two numbers in [0, 1)) with PyTorch's messages. */
  Optimizer.checkBetas = (betas) => {
    if (!Array.isArray(betas) || betas.length !== 2) throw typeErr('betas must be an array of two numbers');
    betas.forEach((b, i) => {
      if (!(Optimizer.num(b, `betas[${i}]`) >= 0 && b < 1)) throw err(`Invalid beta parameter at index ${i}: ${b}`);
    });
  };
  /** `differentiable: true` runs the update of ./differentiable.js (recorded by autograd)
   * instead of the fused one; PyTorch 1.13 has it on SGD, Adam and RMSprop. */
  Optimizer.differentiable = require('./differentiable')(kd);
  Optimizer.checkDifferentiable = (g) => {
    if (typeof g.differentiable !== 'boolean') throw typeErr('differentiable must be a boolean');
    if (g.differentiable && g.fused) throw new kd.KindlingError('`fused` cannot be `differentiable`', 'KD_INVALID_ARGUMENT');
  };
  Optimizer.err = err;
  Optimizer.typeErr = typeErr;
  return Optimizer;
};
