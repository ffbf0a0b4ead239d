// module_hooks.js - the backward hooks of kd.nn.Module (registerFullBackwardHook,
// registerBackwardHook) and the global module hooks of torch.nn.modules.module
// (kd.nn.modules.module.registerModuleForwardPreHook, ...ForwardHook, ...BackwardHook,
// ...FullBackwardHook).
//
// Note [Module backward hooks]: as PyTorch's torch.utils.hooks.BackwardHook, a call of a module
// with backward hooks passes the tensor arguments through one identity autograd node and the
// tensor outputs through another. In the backward pass the outputs' node sees the gradients of
// the outputs (gradOutput) first; the inputs' node then sees the gradients of the inputs
// (gradInput) and calls hook(module, gradInput, gradOutput), which may return replacement
// gradients for the inputs. When no input requires grad, the hooks run at the outputs' node with
// gradInput all null. Nothing is wrapped while grad mode is off.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installModuleHooks(kd, nn, base) {
  const { Module, stateOf, globalHooks, addHook } = base;
  const { Tensor } = kd;

  const hookIds = { nextHook: 0 };
  // a global hook: counted in globalHooks.any while registered
  function addGlobal(map, hook) {
    const h = addHook(map, hook, hookIds);
    globalHooks.any++;
    const remove = h.remove;
    h.remove = () => { if (map.has(h.id)) { remove(); globalHooks.any--; } };
    return h;
  }

  function checkKind(s, full) {
    if (s.backwardHooks.size !== 0 && s.fullBackward !== full) {
      throw new KindlingError('Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them.',
        'KD_INVALID_ARGUMENT');
    }
    s.fullBackward = full;
  }

  /**
   * hook(module, gradInput, gradOutput) runs when the gradients of this module's tensor inputs
   * have been computed (arrays, null for an input that needs none); returning an array replaces
   * gradInput. See Note [Module backward hooks]. Returns a handle whose remove() unregisters it.
   */
  Module.prototype.registerFullBackwardHook = function registerFullBackwardHook(hook) {
    const s = stateOf(this);
    checkKind(s, true);
    return addHook(s.backwardHooks, hook, s);
  };
  /**
   * PyTorch's deprecated non-full backward hook. kindling runs it as a full backward hook (the
   * gradients of the module's inputs and outputs), which is what PyTorch recommends instead.
   */
  Module.prototype.registerBackwardHook = function registerBackwardHook(hook) {
    const s = stateOf(this);
    checkKind(s, false);
    return addHook(s.backwardHooks, hook, s);
  };

  // The identity nodes of Note [Module backward hooks]. Their first argument is the call's state.
  class BackwardHookOutputs extends kd.autograd.Function {
    static forward(ctx, state, ...xs) { ctx.state = state; return xs.length === 1 ? xs[0] : xs; }
    static backward(ctx, ...grads) {
      const st = ctx.state;
      st.gradOutput = grads;
      if (st.nInputs === 0) st.run(st.inputArgs.map(() => null));
      return [null, ...grads];
    }
  }
  class BackwardHookInputs extends kd.autograd.Function {
    static forward(ctx, state, ...xs) { ctx.state = state; ctx.setMaterializeGrads(false); return xs.length === 1 ? xs[0] : xs; }
    static backward(ctx, ...grads) {
      const st = ctx.state;
      // gradInput: one entry per tensor argument of the call; null where none flowed
      const gradInput = st.inputArgs.map(() => null);
      st.wrapped.forEach((argIndex, k) => { gradInput[argIndex] = grads[k]; });
      const out = st.run(gradInput);
      return [null, ...st.wrapped.map((argIndex) => out[argIndex])];
    }
  }

  // Wraps the call's tensor arguments (see Note [Module backward hooks]); returns
  // {args, wrapOutput(out)}: the arguments to call forward with and what wraps its outputs, or null when grad mode is off.
  function setupBackwardHooks(module, args, hooks) {
    if (!kd.isGradEnabled()) return null;
    const tensorArgs = [];
    args.forEach((a, i) => { if (a instanceof Tensor) tensorArgs.push(i); });
    const st = {
      inputArgs: tensorArgs, wrapped: [], nInputs: 0, gradOutput: null,
      run(gradInput) {
        let gi = gradInput;
        for (const h of hooks) {
          const r = h(module, gi, st.gradOutput || []);
          if (r === undefined || r === null) continue;
          const arr = Array.isArray(r) ? r : [r];
          if (arr.length !== gi.length) {
            throw new KindlingError(`Backward hook returned an invalid number of grad_input, got ${arr.length}, but expected ${gi.length}`,
              'KD_INVALID_ARGUMENT');
          }
          gi = arr;
        }
        return gi;
      },
    };
    const needing = tensorArgs.filter((i) => args[i].requiresGrad);
    st.wrapped = needing.map((i) => tensorArgs.indexOf(i));
    st.nInputs = needing.length;
    let newArgs = args;
    if (needing.length) {
      const r = BackwardHookInputs.apply(st, ...needing.map((i) => args[i]));
      const outs = needing.length === 1 ? [r] : r;
      newArgs = args.slice();
      needing.forEach((i, k) => { newArgs[i] = outs[k]; });
    }
    const wrapOutput = (out) => {
      const list = out instanceof Tensor ? [out] : Array.isArray(out) ? out : null;
      if (list === null) return out;
      const idx = [];
      list.forEach((t, i) => { if (t instanceof Tensor && t.requiresGrad) idx.push(i); });
      if (!idx.length) return out;
      const r = BackwardHookOutputs.apply(st, ...idx.map((i) => list[i]));
      const outs = idx.length === 1 ? [r] : r;
      if (out instanceof Tensor) return outs[0];
      const copy = out.slice();
      idx.forEach((i, k) => { copy[i] = outs[k]; });
      return copy;
    };
    return { args: newArgs, wrapOutput };
  }

  // ---- global hooks (torch.nn.modules.module) ------------------------------------------------
  /** hook(module, args) before every module's forward (before the module's own pre-hooks). */
  function registerModuleForwardPreHook(hook) { return addGlobal(globalHooks.preHooks, hook); }
  /** hook(module, args, output) after every module's forward (before the module's own hooks). */
  function registerModuleForwardHook(hook) { return addGlobal(globalHooks.hooks, hook); }
  function globalBackward(hook, full) {
    if (globalHooks.backwardHooks.size !== 0 && globalHooks.fullBackward !== full) {
      throw new KindlingError('Cannot use both regular backward hooks and full backward hooks as a global Module hook. Please use only one of them.',
        'KD_INVALID_ARGUMENT');
    }
    globalHooks.fullBackward = full;
    return addGlobal(globalHooks.backwardHooks, hook);
  }
  /** hook(module, gradInput, gradOutput) for every module (see registerFullBackwardHook). */
  function registerModuleFullBackwardHook(hook) { return globalBackward(hook, true); }
  /** The deprecated global backward hook, run as a full one (see registerBackwardHook). */
  function registerModuleBackwardHook(hook) { return globalBackward(hook, false); }

  globalHooks.setupBackwardHooks = setupBackwardHooks;
  const modules = nn.modules || (nn.modules = {});
  modules.module = Object.assign(modules.module || {}, {
    registerModuleForwardPreHook, registerModuleForwardHook, registerModuleBackwardHook, registerModuleFullBackwardHook,
  });
};
