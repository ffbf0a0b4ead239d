// rnn_layer.js - the recurrence of ONE layer and direction of kd.nn.RNN / LSTM / GRU over a
// sequence in packed layout (rows of time step t at offsets[t] .. offsets[t] + batchSizes[t]; a
// padded [T, B, I] input is the packed layout with every batch size B), as cuDNN and PyTorch
// run it:
//   forward   the input projection of all time steps is ONE matrix product (x W_ih^T + bias);
//             each step then adds h W_hh^T (addmm) and runs the fused gate step
//             (kd._internal.lstmCell / gruCell: one native op, src/cpu/rnn_cell.c);
//   backward  steps in reverse through lstmCellBackward / gruCellBackward and one matrix
//             product each; the weight and input gradients are then ONE product per weight over
//             the gradients of all steps (no per-step weight gradients, no per-step slices of a
//             full-size tensor).
// The layer is one autograd node (a kd.autograd.Function), so the graph does not grow with the
// sequence length (a backward that is itself recorded, for double backward, runs the recorded
// ops instead: recordedBackward). Sequences shorter than the longest (packed input) leave the batch as their
// last step passes: their final state is the state after that step; the reverse direction
// starts each sequence at its own last step.
'use strict';

module.exports = function makeRecurrence(kd) {
  const I = kd._internal;

  const offsetsOf = (bs) => {
    const off = new Array(bs.length);
    let n = 0;
    for (let t = 0; t < bs.length; t++) { off[t] = n; n += bs[t]; }
    return off;
  };
  const rows = (t) => t.shape[0];

  /**
   * Runs the layer. mode 'LSTM' | 'GRU' | 'RNN_TANH' | 'RNN_RELU'; x [N, I]; h0 [B, Hr]; c0 [B, H]
   * (LSTM, else null); w {wIh, wHh, bIh, bHh, wHr} (biases and wHr may be null); bs the batch
   * sizes. Returns {out [N, Hr], hN, cN, saved} (saved: what backward needs, when `save`).
   */
  function forwardLayer(mode, x, h0, c0, w, bs, reverse, save) {
    const T = bs.length;
    const off = offsetsOf(bs);
    const lstm = mode === 'LSTM';
    const gru = mode === 'GRU';
    const wIhT = w.wIh.t();
    const wHhT = w.wHh.t();
    const wHrT = w.wHr ? w.wHr.t() : null;
    let xp;
    if (gru) xp = w.bIh ? kd.addmm(w.bIh, x, wIhT) : x.mm(wIhT);
    else xp = w.bIh ? kd.addmm(w.bIh.add(w.bHh), x, wIhT) : x.mm(wIhT);
    const outs = new Array(T);
    const hPrev = new Array(T);
    const cPrev = lstm ? new Array(T) : null;
    const cys = lstm ? new Array(T) : null;
    const wss = lstm || gru ? new Array(T) : null;
    const hys = wHrT ? new Array(T) : null; // LSTM with a projection: hy before it
    const finals = []; // forward direction: [h, c] of the rows that left the batch, last rows first
    let h = reverse && T ? h0.narrow(0, 0, bs[T - 1]) : h0;
    let c = lstm ? (reverse && T ? c0.narrow(0, 0, bs[T - 1]) : c0) : null;
    for (let k = 0; k < T; k++) {
      const t = reverse ? T - 1 - k : k;
      const b = bs[t];
      const have = rows(h);
      if (b < have) {
        finals.push([h.narrow(0, b, have - b), lstm ? c.narrow(0, b, have - b) : null]);
        h = h.narrow(0, 0, b);
        if (lstm) c = c.narrow(0, 0, b);
      } else if (b > have) {
        h = kd.cat([h, h0.narrow(0, have, b - have)]);
        if (lstm) c = kd.cat([c, c0.narrow(0, have, b - have)]);
      }
      const xt = xp.narrow(0, off[t], b);
      hPrev[t] = h;
      if (lstm) {
        const [hy, cy, ws] = I.lstmCell(kd.addmm(xt, h, wHhT), c);
        cPrev[t] = c;
        cys[t] = cy;
        wss[t] = ws;
        if (wHrT) { hys[t] = hy; h = hy.mm(wHrT); } else h = hy;
        c = cy;
      } else if (gru) {
        const hg = w.bHh ? kd.addmm(w.bHh, h, wHhT) : h.mm(wHhT);
        const [hy, ws] = I.gruCell(xt, hg, h);
        wss[t] = ws;
        h = hy;
      } else {
        const pre = kd.addmm(xt, h, wHhT);
        h = mode === 'RNN_TANH' ? pre.tanh() : pre.relu();
      }
      outs[t] = h;
    }
    let hN = h;
    let cN = c;
    if (!reverse && finals.length) {
      finals.push([h, c]);
      finals.reverse();
      hN = kd.cat(finals.map((f) => f[0]));
      if (lstm) cN = kd.cat(finals.map((f) => f[1]));
    }
    const Hr = w.wHh.shape[1];
    const out = T ? kd.cat(outs) : kd.empty([0, Hr], { dtype: x.dtype, device: x.device });
    let saved = null;
    if (save && T) {
      saved = {
        hPrev: kd.cat(hPrev),
        cPrev: lstm ? kd.cat(cPrev) : null,
        cy: lstm ? kd.cat(cys) : null,
        ws: wss ? kd.cat(wss) : null,
        hy: hys ? kd.cat(hys) : lstm || gru ? null : out, // RNN: its output is hy
      };
    }
    return { out, hN, cN, saved };
  }

  /**
   * The gradients of one layer: gOut [N, Hr], ghN [B, Hr], gcN [B, H] (LSTM) -> {x, h0, c0,
   * wIh, wHh, bIh, bHh, wHr} (null where `need` says no).
   */
  function backwardLayer(mode, x, w, s, bs, reverse, gOut, ghN, gcN, need) {
    const T = bs.length;
    const off = offsetsOf(bs);
    const lstm = mode === 'LSTM';
    const gru = mode === 'GRU';
    const gG = new Array(T); // gradients of the gate pre-activations (GRU: of the input projection)
    const gHg = gru ? new Array(T) : null; // GRU: of the hidden projection
    const gHout = w.wHr ? new Array(T) : null; // projection: of the projected output
    const pieces = []; // reverse direction: [gh, gc] of h0/c0 rows, last rows first
    let gh;
    let gc = null;
    if (reverse || !T) {
      gh = ghN;
      if (lstm) gc = gcN;
    } else {
      gh = ghN.narrow(0, 0, bs[T - 1]);
      if (lstm) gc = gcN.narrow(0, 0, bs[T - 1]);
    }
    for (let k = 0; k < T; k++) {
      const t = reverse ? k : T - 1 - k;
      const b = bs[t];
      const have = rows(gh);
      if (b > have) { // forward direction: rows whose last step was t join
        gh = kd.cat([gh, ghN.narrow(0, have, b - have)]);
        if (lstm) gc = kd.cat([gc, gcN.narrow(0, have, b - have)]);
      }
      const g = gh.add(gOut.narrow(0, off[t], b));
      const at = (v) => v.narrow(0, off[t], b);
      if (lstm) {
        let ghy = g;
        if (w.wHr) { gHout[t] = g; ghy = g.mm(w.wHr); }
        const [gGates, gcPrev] = I.lstmCellBackward(ghy, gc, at(s.cPrev), at(s.cy), at(s.ws));
        gG[t] = gGates;
        gh = gGates.mm(w.wHh);
        gc = gcPrev;
      } else if (gru) {
        const [gx, ghg, ghx] = I.gruCellBackward(g, at(s.hPrev), at(s.ws));
        gG[t] = gx;
        gHg[t] = ghg;
        gh = kd.addmm(ghx, ghg, w.wHh);
      } else {
        const hy = at(s.hy);
        const gpre = mode === 'RNN_TANH' ? g.sub(g.mul(hy.square())) : I.thresholdBackward(g, hy, 0);
        gG[t] = gpre;
        gh = gpre.mm(w.wHh);
      }
      if (reverse) { // rows that start at step t came from h0
        const next = t + 1 < T ? bs[t + 1] : 0;
        if (next < b) {
          pieces.push([gh.narrow(0, next, b - next), lstm ? gc.narrow(0, next, b - next) : null]);
          gh = gh.narrow(0, 0, next);
          if (lstm) gc = gc.narrow(0, 0, next);
        }
      }
    }
    let gh0 = gh;
    let gc0 = gc;
    if (reverse && T) {
      pieces.reverse();
      gh0 = pieces.length === 1 ? pieces[0][0] : kd.cat(pieces.map((p) => p[0]));
      if (lstm) gc0 = pieces.length === 1 ? pieces[0][1] : kd.cat(pieces.map((p) => p[1]));
    }
    const r = { x: null, h0: need.h0 ? gh0 : null, c0: lstm && need.c0 ? gc0 : null, wIh: null, wHh: null, bIh: null, bHh: null, wHr: null };
    if (!T) return r;
    const GA = kd.cat(gG);
    const GH = gru ? kd.cat(gHg) : GA;
    if (need.x) r.x = GA.mm(w.wIh);
    if (need.wIh) r.wIh = GA.t().mm(x);
    if (need.wHh) r.wHh = GH.t().mm(s.hPrev);
    if (need.bIh) r.bIh = GA.sum(0);
    if (need.bHh) r.bHh = GH.sum(0);
    if (need.wHr) r.wHr = kd.cat(gHout).t().mm(s.hy);
    return r;
  }

  const ARGS = ['x', 'h0', 'c0', 'wIh', 'wHh', 'bIh', 'bHh', 'wHr'];

  /**
   * The gradients when the backward itself is recorded (create_graph: double backward): the
   * layer run again with recorded ops from its saved inputs, and differentiated by the engine, so
   * the gradients depend on the inputs as they should (the saved intermediates of the fast path
   * were made without recording). As PyTorch, whose non-cuDNN RNN is made of differentiable ops.
   */
  function recordedBackward(mode, ins, cfg, grads, need) {
    return kd.tidy(() => {
      const [x, h0, c0, wIh, wHh, bIh, bHh, wHr] = ins;
      const r = forwardLayer(mode, x, h0, c0, { wIh, wHh, bIh, bHh, wHr }, cfg.batchSizes, cfg.reverse, false);
      const outs = mode === 'LSTM' ? [r.out, r.hN, r.cN] : [r.out, r.hN];
      const want = ARGS.map((_, i) => i).filter((i) => ins[i] && need[ARGS[i]]);
      const g = want.length ? kd.autograd.grad(outs, want.map((i) => ins[i]), grads.slice(0, outs.length), { createGraph: true, allowUnused: true }) : [];
      const out = ARGS.map(() => null);
      want.forEach((i, k) => { out[i] = g[k]; });
      return out;
    });
  }

  /** Whether ops run now are recorded (the engine turns recording on in a backward with create_graph). */
  function recording(ins) {
    const t = ins.find((v) => v && v.requiresGrad);
    if (!t) return false;
    const probe = t.expand(t.shape); // a view of any strides, recorded when recording is on
    const on = probe.requiresGrad;
    probe.dispose();
    return on;
  }

  /** The layer as one autograd node: apply(x, h0, c0, wIh, wHh, bIh, bHh, wHr, cfg) -> [out, hN, cN?]. */
  class RecurrentLayer extends kd.autograd.Function {
    static forward(ctx, x, h0, c0, wIh, wHh, bIh, bHh, wHr, cfg) {
      const w = { wIh, wHh, bIh, bHh, wHr };
      const r = kd.tidy(() => forwardLayer(cfg.mode, x, h0, c0, w, cfg.batchSizes, cfg.reverse, true));
      ctx.cfg = cfg;
      const s = r.saved;
      if (s) cfg.made = Object.values(s).filter((v) => v !== null && v !== r.out);
      ctx.saveForBackward(x, h0, c0, wIh, wHh, bIh, bHh, wHr, s && s.hPrev, s && s.cPrev, s && s.cy, s && s.ws, s && s.hy);
      return cfg.mode === 'LSTM' ? [r.out, r.hN, r.cN] : [r.out, r.hN];
    }
    static backward(ctx, gOut, ghN, gcN) {
      const { cfg } = ctx;
      const saved = ctx.savedTensors;
      const ins = saved.slice(0, 8);
      const [x, , , wIh, wHh, , , wHr, hPrev, cPrev, cy, ws, hy] = saved;
      const need = {};
      ARGS.forEach((k, i) => { need[k] = ctx.needsInputGrad[i]; });
      if (recording(ins)) return recordedBackward(cfg.mode, ins, cfg, [gOut, ghN, gcN], need);
      const s = { hPrev, cPrev, cy, ws, hy };
      const g = kd.tidy(() => backwardLayer(cfg.mode, x, { wIh, wHh, wHr }, s, cfg.batchSizes, cfg.reverse,
        gOut, ghN, cfg.mode === 'LSTM' ? gcN : null, need));
      return ARGS.map((k) => g[k]);
    }
  }

  /**
   * One layer and direction: [out [N, Hr], hN [B, Hr], cN [B, H] (LSTM) or null]. Records one
   * autograd node when grad mode is on and a tensor argument requires grad.
   */
  function runLayer(mode, x, h0, c0, w, batchSizes, reverse) {
    const args = [x, h0, c0, w.wIh, w.wHh, w.bIh, w.bHh, w.wHr];
    if (kd.isGradEnabled() && args.some((a) => a && a.requiresGrad)) {
      const cfg = { mode, batchSizes, reverse, made: null };
      const r = RecurrentLayer.apply(...args, cfg);
      // the node holds what it saved (Note [Tensors a custom node saves] in src/napi/autograd.c)
      if (cfg.made) for (const t of cfg.made) t.dispose();
      cfg.made = null;
      return [r[0], r[1], mode === 'LSTM' ? r[2] : null];
    }
    const r = kd.tidy(() => forwardLayer(mode, x, h0, c0, w, batchSizes, reverse, false));
    return [r.out, r.hN, r.cN];
  }

  return { runLayer };
};
