// library.js - kd.library: ops defined at run time, as PyTorch's torch.library. An op defined here
// joins the dispatcher like a built-in (src/dispatch/op_registry.h): it has a schema, a kernel per
// device written in JS, an autograd formula and an autocast policy, and is called as
// kd.ops.<namespace>.<name>(...):
//   kd.library.define('mylib::scale(Tensor x, float alpha=1.0) -> Tensor');
//   kd.library.impl('mylib::scale', 'cpu', (x, alpha) => x.mul(alpha));
//   kd.library.registerAutograd('mylib::scale', (ctx, g) => [g.mul(ctx.alpha), null],
//     { setupContext: (ctx, [x, alpha]) => { ctx.alpha = alpha; } });
//   kd.ops.mylib.scale(x, 2);
// Implementations run below autograd (the ops they call are not recorded); the node of a call is
// recorded by the op's Autograd kernel, through the same custom node as kd.autograd.Function. See
// Note [JS kernels and their tensors] in src/napi/library.c for who disposes what.
'use strict';

const { KindlingError, typeError } = require('./errors');
const { tidyMade } = require('./tidy');

// looked up with names users give: no prototype ('toString' is no policy)
const POLICIES = Object.assign(Object.create(null), { none: 0, lower: 1, fp32: 2, promote: 4 });
const DEVICE_KEYS = Object.assign(Object.create(null), { cpu: 'CPU', cuda: 'CUDA' });

module.exports = function installLibrary(kd, Tensor, N) {
  // Names come from users: ops live in a Map, namespaces in objects without a prototype, so no
  // name ('__proto__', 'constructor') reaches Object.prototype.
  const ops = new Map(); // qualified name -> { info, autograd, callable }
  const opsByNamespace = Object.create(null);

  function lookup(name, what) {
    if (typeof name !== 'string') throw typeError(`${what}: the op name must be a string ('namespace::name')`);
    const op = ops.get(name);
    if (!op) throw new KindlingError(`${what}: op '${name}' is not defined (call kd.library.define first)`, 'KD_INVALID_ARGUMENT');
    return op;
  }

  // JS values of a call as the user sees them: handles become Tensors (lists of handles, arrays).
  const toUser = (v) => {
    if (Array.isArray(v)) return v.map(toUser);
    if (v !== null && typeof v === 'object') return new Tensor(v);
    return v;
  };
  // ... and back: Tensors become handles, by the argument's schema type. A Tensor[] is copied,
  // each element read once (never through the array's own methods); other values, lists of
  // numbers too, go to the native entry as given, which checks them (src/napi/ops.c).
  const MAX_LIST = 2 ** 24; // as the native entry (Note [JS lengths in C])
  const handleOf = (v) => (v instanceof Tensor ? v._h : v);
  const toNative = (type, v) => {
    if (type.startsWith('Tensor') && type.endsWith('[]')) {
      if (!Array.isArray(v) || v.length > MAX_LIST) return v;
      const out = new Array(v.length);
      for (let i = 0; i < out.length; i++) out[i] = handleOf(v[i]);
      return out;
    }
    return type.startsWith('Tensor') ? handleOf(v) : v;
  };

  // The callable kd.ops.ns.name: positional arguments in schema order, optionally followed by an
  // options object naming any of them.
  function makeCallable(info) {
    const names = info.args.map((a) => a.name);
    const types = info.args.map((a) => a.type);
    const call = function (...given) {
      let args = given;
      const last = given[given.length - 1];
      if (given.length > 0 && last !== null && typeof last === 'object' && !Array.isArray(last) &&
          !(last instanceof Tensor) && Object.getPrototypeOf(last) === Object.prototype) {
        args = given.slice(0, -1);
        for (const k of Object.keys(last)) {
          const i = names.indexOf(k);
          if (i < 0) throw typeError(`${info.name}() got an unexpected keyword argument '${k}'`);
          if (i < args.length) throw typeError(`${info.name}() got multiple values for argument '${k}'`);
          args[i] = last[k];
        }
      }
      if (args.length > names.length) {
        throw typeError(`${info.name}() takes ${names.length} arguments but ${args.length} were given`);
      }
      const r = info.fn(...args.map((v, i) => toNative(types[i], v)));
      return toUser(r);
    };
    Object.defineProperty(call, 'name', { value: info.name });
    return call;
  }

  // The recorder of every op (Autograd kernel, src/autograd/runtime_op.c): a custom node whose
  // backward is the registered formula, or one that says there is none.
  function makeRecorder(op) {
    const name = op.info.name;
    return (rawArgs, rawOuts) => {
      const inputs = rawArgs.map(toUser);
      const outs = Array.isArray(rawOuts) ? rawOuts.map(toUser) : [toUser(rawOuts)];
      const needs = inputs.map((a) => (a instanceof Tensor ? a.requiresGrad : Array.isArray(a) && a.some((e) => e instanceof Tensor && e.requiresGrad)));
      const ctx = new kd.autograd.FunctionCtx(needs);
      const ag = op.autograd;
      if (ag && ag.setupContext) ag.setupContext(ctx, inputs, op.info.nouts === 1 ? outs[0] : outs);
      const backward = ag
        ? (grads) => ag.backward(ctx, ...grads)
        : () => {
          throw new KindlingError(`${name}: an autograd formula was not registered (kd.library.registerAutograd) but we are trying to backprop through it`, 'KD_NOT_SUPPORTED');
        };
      // the tensors ctx keeps move into the node; the handles made for this call are disposed
      // when it returns (See Note [JS kernels and their tensors] in src/napi/library.c)
      kd.autograd._recordCustomNode(`${name}Backward`, ctx, inputs, outs, backward, true);
    };
  }

  // The formula of an op whose backward is another op (C extensions' set_backward): that op gets
  // the gradients (contiguous), then the op's arguments, and returns one gradient per tensor
  // argument.
  function backwardOpFormula(info) {
    return {
      setupContext(ctx, inputs) {
        ctx.saveForBackward(...inputs.filter((a) => a instanceof Tensor));
        ctx.isTensor = inputs.map((a) => a instanceof Tensor);
        ctx.others = inputs.map((a) => (a instanceof Tensor ? null : a));
      },
      backward(ctx, ...grads) {
        const saved = ctx.savedTensors;
        let k = 0;
        const inputs = ctx.others.map((a, i) => (ctx.isTensor[i] ? saved[k++] : a));
        const r = ops.get(info.backward).callable(...grads.map((g) => g.contiguous()), ...inputs);
        const list = Array.isArray(r) ? r : [r];
        k = 0;
        return inputs.map((a, i) => (ctx.isTensor[i] ? list[k++] : null));
      },
    };
  }

  // Makes a defined op (from define, or from a C extension) callable as kd.ops.ns.name, with the
  // recorder that makes its autograd node.
  function adopt(info) {
    const op = { info, autograd: info.backward ? backwardOpFormula(info) : null, callable: makeCallable(info) };
    ops.set(info.name, op);
    N.library.setRecorder(info.id, makeRecorder(op));
    const [ns, name] = info.name.split('::');
    if (!Object.hasOwn(opsByNamespace, ns)) opsByNamespace[ns] = Object.create(null);
    opsByNamespace[ns][name] = op.callable;
    return op.callable;
  }

  const library = {
    /**
     * Defines an op from its schema (PyTorch's syntax, 'ns::name(Tensor x, float alpha=1.0) ->
     * Tensor'); returns the callable, also reachable as kd.ops.ns.name.
     */
    define(schema) {
      if (typeof schema !== 'string') throw typeError('define(schema): schema must be a string');
      return adopt(N.library.define(schema));
    },

    /**
     * Registers fn as the implementation of op `name` for a device type ('cpu', 'cuda', or an
     * array of them). fn gets the arguments in schema order (Tensors, numbers, ...) and returns
     * a Tensor (or an array, per the schema's returns). It runs synchronously; tensors it makes and
     * does not return are disposed.
     */
    impl(name, device, fn) {
      const op = lookup(name, 'impl');
      if (typeof fn !== 'function') throw typeError('impl(name, device, fn): fn must be a function');
      const devices = Array.isArray(device) ? device : [device];
      for (const d of devices) {
        const key = DEVICE_KEYS[typeof d === 'string' ? d.toLowerCase() : d];
        if (!key) throw typeError(`impl(name, device, fn): device must be 'cpu' or 'cuda', got ${String(d)}`);
        N.library.impl(op.info.id, key, (rawArgs) => {
          const args = rawArgs.map(toUser);
          const [result, made] = tidyMade(() => {
            const r = fn(...args);
            // checked before the scope walks it: a list's length is the caller's to choose
            if (Array.isArray(r) && r.length > MAX_LIST) throw new KindlingError(`the implementation of '${op.info.name}' returned more than ${MAX_LIST} tensors`, 'KD_INVALID_ARGUMENT');
            return r;
          });
          if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
            throw typeError(`the implementation of '${op.info.name}' returned a promise: implementations are synchronous`);
          }
          // read once, by index (never through the array's own methods), as arguments are
          const list = op.info.nouts === 1 || !Array.isArray(result) ? [result] : Array.from({ length: result.length }, (_, i) => result[i]);
          return [list.map(handleOf), list.map((t) => made.has(t))];
        });
      }
    },

    /**
     * Registers the backward of op `name` (PyTorch 2's torch.library.register_autograd):
     * backward(ctx, ...gradOutputs) returns one gradient (or null) per input; setupContext(ctx,
     * inputs, output) saves what backward needs (ctx.saveForBackward, or plain properties).
     * backward is written with kd ops, so it can itself be differentiated.
     */
    registerAutograd(name, backward, { setupContext } = {}) {
      const op = lookup(name, 'registerAutograd');
      if (typeof backward !== 'function') throw typeError('registerAutograd(name, backward): backward must be a function');
      if (setupContext !== undefined && typeof setupContext !== 'function') throw typeError('registerAutograd: setupContext must be a function');
      if (op.autograd) throw new KindlingError(`op '${name}' already has an autograd formula`, 'KD_ALREADY_DEFINED');
      op.autograd = { backward, setupContext };
    },

    /**
     * Sets the autocast policy of op `name` ('lower', 'fp32' or 'promote', see
     * src/ops/autocast_policy.js), for both device types or per device type: { cpu, cuda }.
     */
    registerAutocast(name, policy) {
      const op = lookup(name, 'registerAutocast');
      const per = typeof policy === 'string' ? { cpu: policy, cuda: policy } : policy;
      if (per === null || typeof per !== 'object') throw typeError("registerAutocast(name, policy): policy must be 'lower', 'fp32', 'promote' or { cpu, cuda }");
      ['cpu', 'cuda'].forEach((dev, i) => {
        if (per[dev] === undefined) return;
        if (!(per[dev] in POLICIES)) throw typeError(`registerAutocast: unknown policy '${per[dev]}' (expected 'lower', 'fp32', 'promote' or 'none')`);
        N.library.setAutocast(op.info.id, i, POLICIES[per[dev]]);
      });
    },
  };

  kd.library = library;
  kd.ops = opsByNamespace;
  return { adopt };
};
