// optim/lbfgs.js - kd.optim.LBFGS (PyTorch 1.13's torch.optim.LBFGS): limited-memory BFGS over
// the flattened parameters, with PyTorch's options (lr, maxIter, maxEval, toleranceGrad,
// toleranceChange, historySize, lineSearchFn: null or 'strong_wolfe') and one parameter group.
// step(closure) is required: the closure zeroes the gradients, recomputes the loss, calls
// backward() and returns the loss. The algorithm (and the strong Wolfe line search with cubic
// interpolation) is PyTorch's line for line; scalars (dot products, step lengths) are JS numbers.
// State (on the first parameter, as PyTorch): funcEvals, nIter, d, t, oldDirs, oldStps, ro,
// HDiag, prevFlatGrad, prevLoss, al.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err, typeErr } = Optimizer;

  function cubicInterpolate(x1, f1, g1, x2, f2, g2, bounds) {
    const [lo, hi] = bounds || (x1 <= x2 ? [x1, x2] : [x2, x1]);
    const d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
    const d2Square = d1 * d1 - g1 * g2;
    if (d2Square >= 0) {
      const d2 = Math.sqrt(d2Square);
      const minPos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
      return Math.min(Math.max(minPos, lo), hi);
    }
    return (lo + hi) / 2;
  }

  const keepT = (t) => kd.keep(t);
  const drop = (t) => { if (t) t.dispose(); };
  const dot = (a, b) => kd.tidy(() => a.dot(b).item());
  const absMax = (a) => kd.tidy(() => a.abs().max().item());

  /** The strong Wolfe line search; returns [fNew, gNew (kept), t, evals]. g is not consumed. */
  function strongWolfe(objFunc, x, t, d, f, g, gtd, c1 = 1e-4, c2 = 0.9, toleranceChange = 1e-9, maxLs = 25) {
    const dNorm = absMax(d);
    g = keepT(g.clone());
    let [fNew, gNew] = objFunc(x, t, d);
    let evals = 1;
    let gtdNew = dot(gNew, d);
    let tPrev = 0;
    let fPrev = f;
    let gPrev = g;
    let gtdPrev = gtd;
    let done = false;
    let lsIter = 0;
    let bracket; let bracketF; let bracketG; let bracketGtd;
    const owned = new Set([g, gNew]);
    while (lsIter < maxLs) {
      if (fNew > f + c1 * t * gtd || (lsIter > 1 && fNew >= fPrev)) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      if (Math.abs(gtdNew) <= -c2 * gtd) {
        [bracket, bracketF, bracketG] = [[t], [fNew], [gNew]];
        done = true;
        break;
      }
      if (gtdNew >= 0) {
        [bracket, bracketF, bracketG, bracketGtd] = [[tPrev, t], [fPrev, fNew], [gPrev, gNew], [gtdPrev, gtdNew]];
        break;
      }
      const minStep = t + 0.01 * (t - tPrev);
      const maxStep = t * 10;
      const tmp = t;
      t = cubicInterpolate(tPrev, fPrev, gtdPrev, t, fNew, gtdNew, [minStep, maxStep]);
      tPrev = tmp;
      fPrev = fNew;
      gPrev = gNew;
      gtdPrev = gtdNew;
      [fNew, gNew] = objFunc(x, t, d);
      owned.add(gNew);
      evals += 1;
      gtdNew = dot(gNew, d);
      lsIter += 1;
    }
    if (lsIter === maxLs) [bracket, bracketF, bracketG] = [[0, t], [f, fNew], [g, gNew]];
    let insufProgress = false;
    let [lowPos, highPos] = bracketF[0] <= bracketF[bracketF.length - 1] ? [0, 1] : [1, 0];
    while (!done && lsIter < maxLs) {
      if (Math.abs(bracket[1] - bracket[0]) * dNorm < toleranceChange) break;
      t = cubicInterpolate(bracket[0], bracketF[0], bracketGtd[0], bracket[1], bracketF[1], bracketGtd[1]);
      const bMax = Math.max(...bracket);
      const bMin = Math.min(...bracket);
      const eps = 0.1 * (bMax - bMin);
      if (Math.min(bMax - t, t - bMin) < eps) {
        if (insufProgress || t >= bMax || t <= bMin) {
          t = Math.abs(t - bMax) < Math.abs(t - bMin) ? bMax - eps : bMin + eps;
          insufProgress = false;
        } else insufProgress = true;
      } else insufProgress = false;
      [fNew, gNew] = objFunc(x, t, d);
      owned.add(gNew);
      evals += 1;
      gtdNew = dot(gNew, d);
      lsIter += 1;
      if (fNew > f + c1 * t * gtd || fNew >= bracketF[lowPos]) {
        bracket[highPos] = t;
        bracketF[highPos] = fNew;
        bracketG[highPos] = gNew;
        bracketGtd[highPos] = gtdNew;
        [lowPos, highPos] = bracketF[0] <= bracketF[1] ? [0, 1] : [1, 0];
      } else {
        if (Math.abs(gtdNew) <= -c2 * gtd) done = true;
        else if (gtdNew * (bracket[highPos] - bracket[lowPos]) >= 0) {
          bracket[highPos] = bracket[lowPos];
          bracketF[highPos] = bracketF[lowPos];
          bracketG[highPos] = bracketG[lowPos];
          bracketGtd[highPos] = bracketGtd[lowPos];
        }
        bracket[lowPos] = t;
        bracketF[lowPos] = fNew;
        bracketG[lowPos] = gNew;
        bracketGtd[lowPos] = gtdNew;
      }
    }
    const gOut = bracketG[lowPos];
    for (const o of owned) if (o !== gOut) drop(o);
    return [bracketF[lowPos], gOut, bracket[lowPos], evals];
  }

  class LBFGS extends Optimizer {
    /** new LBFGS(params, {lr = 1, maxIter = 20, maxEval = maxIter * 5 / 4, toleranceGrad = 1e-7,
     * toleranceChange = 1e-9, historySize = 100, lineSearchFn = null}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1, maxIter = 20, toleranceGrad = 1e-7, toleranceChange = 1e-9, historySize = 100, lineSearchFn = null } = options;
      let { maxEval = null } = options;
      if (maxEval === null) maxEval = Math.floor(maxIter * 5 / 4);
      super(params, { lr, maxIter, maxEval, toleranceGrad, toleranceChange, historySize, lineSearchFn });
      if (this.paramGroups.length !== 1) throw err("LBFGS doesn't support per-parameter options (parameter groups)");
      this._params = this.paramGroups[0].params;
      Object.defineProperty(this, '_params', { enumerable: false });
    }

    addParamGroup(group) {
      if (this.paramGroups.length >= 1) throw err("LBFGS doesn't support per-parameter options (parameter groups)");
      super.addParamGroup(group);
    }

    _checkGroup(g) {
      num(g.lr, 'lr');
      if (!Number.isInteger(g.maxIter) || g.maxIter < 1) throw err(`Invalid max_iter value: ${g.maxIter}`);
      if (!Number.isInteger(g.maxEval)) throw err(`Invalid max_eval value: ${g.maxEval}`);
      num(g.toleranceGrad, 'toleranceGrad');
      num(g.toleranceChange, 'toleranceChange');
      if (!Number.isInteger(g.historySize) || g.historySize < 1) throw err(`Invalid history_size value: ${g.historySize}`);
      if (g.lineSearchFn !== null && g.lineSearchFn !== 'strong_wolfe') throw err("only 'strong_wolfe' is supported");
    }

    _gatherFlatGrad() {
      return kd.keep(kd.tidy(() => kd.cat(this._params.map((p) => (p.grad === null
        ? kd.zeros([p.numel()], { dtype: p.dtype, device: p.device }) : p.grad.reshape(-1))), 0)));
    }

    _addGrad(stepSize, update) {
      kd.tidy(() => {
        let offset = 0;
        for (const p of this._params) {
          const n = p.numel();
          p.add_(update.narrow(0, offset, n).view(p.shape), { alpha: stepSize });
          offset += n;
        }
      });
    }

    /** One optimization step (up to maxIter iterations); returns the closure's first loss. */
    step(closure) {
      if (typeof closure !== 'function') throw typeErr('LBFGS.step(closure) needs a closure that returns the loss');
      return kd.noGrad(() => this._step(closure));
    }

    _step(closure) {
      const group = this.paramGroups[0];
      const { lr, maxIter, maxEval, toleranceGrad, toleranceChange, lineSearchFn, historySize } = group;
      const evaluate = () => kd.enableGrad(closure);
      const lossValue = (l) => (typeof l === 'number' ? l : Number(l.item()));
      let state = this.state.get(this._params[0]);
      if (state === undefined) this.state.set(this._params[0], (state = {}));
      if (state.funcEvals === undefined) state.funcEvals = 0;
      if (state.nIter === undefined) state.nIter = 0;

      const origLoss = evaluate();
      let loss = lossValue(origLoss);
      let currentEvals = 1;
      state.funcEvals += 1;
      let flatGrad = this._gatherFlatGrad();
      let optCond = absMax(flatGrad) <= toleranceGrad;
      if (optCond) { flatGrad.dispose(); return origLoss; }

      let { d = null, t = null, oldDirs = null, oldStps = null, ro = null, HDiag = null, prevFlatGrad = null, prevLoss = null } = state;
      let nIter = 0;
      const objFunc = (x, tt, dd) => {
        this._addGrad(tt, dd);
        const l = lossValue(evaluate());
        const g = this._gatherFlatGrad();
        this._params.forEach((p, i) => p.copy_(x[i]));
        return [l, g];
      };
      while (nIter < maxIter) {
        nIter += 1;
        state.nIter += 1;
        if (state.nIter === 1) {
          drop(d);
          d = keepT(flatGrad.neg());
          for (const a of [oldDirs, oldStps]) if (a) a.forEach(drop);
          oldDirs = [];
          oldStps = [];
          ro = [];
          HDiag = 1;
        } else {
          const y = keepT(flatGrad.sub(prevFlatGrad));
          const s = keepT(d.mul(t));
          const ys = dot(y, s);
          if (ys > 1e-10) {
            if (oldDirs.length === historySize) {
              drop(oldDirs.shift());
              drop(oldStps.shift());
              ro.shift();
            }
            oldDirs.push(y);
            oldStps.push(s);
            ro.push(1 / ys);
            HDiag = ys / dot(y, y);
          } else { y.dispose(); s.dispose(); }
          const numOld = oldDirs.length;
          if (state.al === undefined) state.al = new Array(historySize).fill(null);
          const al = state.al;
          const q = flatGrad.neg();
          for (let i = numOld - 1; i >= 0; i--) {
            al[i] = dot(oldStps[i], q) * ro[i];
            q.add_(oldDirs[i], { alpha: -al[i] });
          }
          drop(d);
          d = keepT(kd.mul(q, HDiag));
          q.dispose();
          for (let i = 0; i < numOld; i++) {
            const be = dot(oldDirs[i], d) * ro[i];
            d.add_(oldStps[i], { alpha: al[i] - be });
          }
        }
        if (prevFlatGrad === null) prevFlatGrad = keepT(flatGrad.clone());
        else prevFlatGrad.copy_(flatGrad);
        prevLoss = loss;
        if (state.nIter === 1) t = Math.min(1, 1 / kd.tidy(() => flatGrad.abs().sum().item())) * lr;
        else t = lr;
        const gtd = dot(flatGrad, d);
        if (gtd > -toleranceChange) break;
        let lsEvals = 0;
        if (lineSearchFn !== null) {
          const xInit = this._params.map((p) => keepT(p.clone()));
          let gNew;
          try {
            [loss, gNew, t, lsEvals] = strongWolfe(objFunc, xInit, t, d, loss, flatGrad, gtd);
          } finally { xInit.forEach(drop); }
          flatGrad.dispose();
          flatGrad = gNew;
          this._addGrad(t, d);
          optCond = absMax(flatGrad) <= toleranceGrad;
        } else {
          this._addGrad(t, d);
          if (nIter !== maxIter) {
            loss = lossValue(evaluate());
            flatGrad.dispose();
            flatGrad = this._gatherFlatGrad();
            optCond = absMax(flatGrad) <= toleranceGrad;
            lsEvals = 1;
          }
        }
        currentEvals += lsEvals;
        state.funcEvals += lsEvals;
        if (nIter === maxIter) break;
        if (currentEvals >= maxEval) break;
        if (optCond) break;
        if (kd.tidy(() => absMax(d.mul(t))) <= toleranceChange) break;
        if (Math.abs(loss - prevLoss) < toleranceChange) break;
      }
      flatGrad.dispose();
      Object.assign(state, { d, t, oldDirs, oldStps, ro, HDiag, prevFlatGrad, prevLoss });
      return origLoss;
    }

    dispose() {
      for (const st of this.state.values()) {
        for (const k of ['d', 'prevFlatGrad']) drop(st[k]);
        for (const k of ['oldDirs', 'oldStps']) if (st[k]) st[k].forEach(drop);
      }
      this.state.clear();
    }
  }
  return LBFGS;
};
