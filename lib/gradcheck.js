// gradcheck.js - kd.autograd.gradcheck / gradgradcheck: compare the gradients autograd computes
// with central finite differences, as torch.autograd.gradcheck does (use float64 inputs).
// The analytical Jacobian comes from one vector-Jacobian product per output element; the
// numerical one from perturbing each input element by +-eps in place through a detached alias.
'use strict';

const { KindlingError, typeError } = require('./errors');

module.exports = function installGradcheck(autograd, kd, Tensor) {
  const asList = (x) => (x instanceof Tensor ? [x] : Array.isArray(x) ? x : [x]);
  const floats = new Set(['float32', 'float64', 'float16', 'bfloat16']);

  function outputsOf(fn, inputs) {
    const r = fn(...inputs);
    return asList(r).filter((o) => o instanceof Tensor && floats.has(o.dtype));
  }

  function flat(t) { return Array.from(t.detach().contiguous().to('float64').dataSync()); }

  // Every element of t as a 0-d view (for in-place perturbation), in row-major order.
  function elementViews(t) {
    const shape = t.shape;
    const strides = t.stride();
    const base = t.detach();
    const off0 = t.storageOffset();
    const n = shape.reduce((a, b) => a * b, 1);
    const views = [];
    const idx = new Array(shape.length).fill(0);
    for (let k = 0; k < n; k++) {
      let off = off0;
      for (let d = 0; d < shape.length; d++) off += idx[d] * strides[d];
      views.push(base.asStrided([], [], off));
      for (let d = shape.length - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return views;
  }

  function numericalJacobian(fn, inputs, diffIdx, eps) {
    // J[o][i] = rows (per output element) x cols (per input element), flattened per (o, i) pair
    const J = [];
    for (const i of diffIdx) {
      const views = elementViews(inputs[i]);
      const cols = [];
      for (const v of views) {
        const orig = v.item();
        // v is a view of a detached alias: filling it is not recorded (fn itself may need grad
        // mode, as in gradgradcheck)
        v.fill_(orig + eps);
        const plus = outputsOf(fn, inputs).map(flat);
        v.fill_(orig - eps);
        const minus = outputsOf(fn, inputs).map(flat);
        v.fill_(orig);
        cols.push(plus.map((p, o) => p.map((x, r) => (x - minus[o][r]) / (2 * eps))));
      }
      J.push(cols);
    }
    return J; // J[ii][col][o][row]
  }

  function analyticalJacobian(fn, inputs, diffIdx) {
    const outs = outputsOf(fn, inputs);
    const diffIns = diffIdx.map((i) => inputs[i]);
    const J = diffIdx.map((i) => Array.from({ length: inputs[i].numel() }, () => outs.map((o) => new Array(o.numel()).fill(0))));
    outs.forEach((o, oi) => {
      const n = o.numel();
      for (let r = 0; r < n; r++) {
        const go = kd.zeros(o.shape, { dtype: o.dtype, device: o.device });
        if (n > 0) go.reshape([-1]).narrow(0, r, 1).fill_(1);
        const gs = o.requiresGrad ? autograd.grad([o], diffIns, [go], { retainGraph: true, allowUnused: true }) : diffIns.map(() => null);
        gs.forEach((g, ii) => {
          if (!g) return;
          const vals = flat(g);
          vals.forEach((v, col) => { J[ii][col][oi][r] = v; });
        });
      }
    });
    return J;
  }

  function compare(num, ana, diffIdx, atol, rtol, what) {
    for (let ii = 0; ii < diffIdx.length; ii++) {
      for (let col = 0; col < num[ii].length; col++) {
        for (let o = 0; o < num[ii][col].length; o++) {
          for (let r = 0; r < num[ii][col][o].length; r++) {
            const n = num[ii][col][o][r];
            const a = ana[ii][col][o][r];
            const bad = Number.isNaN(n) !== Number.isNaN(a) || Math.abs(a - n) > atol + rtol * Math.abs(n);
            if (bad) {
              throw new KindlingError(`${what}Jacobian mismatch for output ${o} with respect to input ${diffIdx[ii]}: ` +
                `element (row ${r}, column ${col}): numerical ${n}, analytical ${a} (atol ${atol}, rtol ${rtol})`, 'KD_GRADCHECK');
            }
          }
        }
      }
    }
  }

  /** Checks fn's gradients w.r.t. the inputs that require grad against finite differences.
   * Returns true, or throws (raiseException: false returns false instead). */
  autograd.gradcheck = function gradcheck(fn, inputs, { eps = 1e-6, atol = 1e-5, rtol = 1e-3, raiseException = true } = {}) {
    if (typeof fn !== 'function') throw typeError('gradcheck(fn, inputs, options?) expects a function');
    const ins = asList(inputs);
    const diffIdx = ins.map((t, i) => (t instanceof Tensor && t.requiresGrad ? i : -1)).filter((i) => i >= 0);
    if (!diffIdx.length) throw new KindlingError('gradcheck expects at least one input tensor to require gradient', 'KD_INVALID_ARGUMENT');
    try {
      const ana = analyticalJacobian(fn, ins, diffIdx);
      const num = numericalJacobian(fn, ins, diffIdx, eps);
      compare(num, ana, diffIdx, atol, rtol, '');
    } catch (e) {
      if (raiseException) throw e;
      return false;
    }
    return true;
  };

  /** Checks second derivatives: gradcheck of the function (inputs, gradOutputs) -> the
   * gradients of fn, built with createGraph. */
  autograd.gradgradcheck = function gradgradcheck(fn, inputs, gradOutputs, options = {}) {
    if (gradOutputs && !Array.isArray(gradOutputs) && !(gradOutputs instanceof Tensor)) { options = gradOutputs; gradOutputs = undefined; }
    const ins = asList(inputs);
    const outs = outputsOf(fn, ins);
    const gos = gradOutputs ? asList(gradOutputs)
      : outs.map((o) => kd.randn(o.shape, { dtype: 'float64', device: o.device }).requiresGrad_());
    const diffIdx = ins.map((t, i) => (t instanceof Tensor && t.requiresGrad ? i : -1)).filter((i) => i >= 0);
    const n = ins.length;
    const g = (...all) => {
      const xs = all.slice(0, n);
      const vs = all.slice(n);
      const os = outputsOf(fn, xs);
      const grads = autograd.grad(os, diffIdx.map((i) => xs[i]), vs, { createGraph: true, allowUnused: true });
      return grads.filter((x) => x !== null);
    };
    return autograd.gradcheck(g, [...ins, ...gos], options);
  };
};
