// amp.js - mixed precision training: kd.autocast (lib/autocast.js) and kd.amp.GradScaler, after
// PyTorch 1.13's torch/cuda/amp/grad_scaler.py, working on the CPU and on CUDA. The scale and
// the growth tracker live on the device of the first scaled loss; unscale_ runs ONE fused native
// call per device over all of an optimizer's gradients (kd._internal.ampForeachNonFiniteCheck-
// AndUnscale_: multiply by 1/scale, note inf/NaN) and update() one more (ampUpdateScale_), so
// the only host sync of a step is step()'s read of found-inf, as in PyTorch.
'use strict';

const installAutocast = require('./autocast');

module.exports = function installAmp(kd, Tensor, N, rt) {
  const autocast = installAutocast(kd, N, rt);
  const I = kd._internal;
  const err = (msg, code = 'KD_INVALID_ARGUMENT') => new kd.KindlingError(msg, code);
  const typeErr = (msg) => new kd.KindlingTypeError(msg, 'KD_INVALID_TYPE');

  const READY = 0, UNSCALED = 1, STEPPED = 2;
  const freshState = () => ({ stage: READY, foundInfPerDevice: new Map() });

  /**
   * Gradient scaling for mixed precision training (PyTorch's GradScaler):
   * `scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update();`
   */
  class GradScaler {
    constructor({ initScale = 2.0 ** 16, growthFactor = 2.0, backoffFactor = 0.5, growthInterval = 2000, enabled = true } = {}) {
      if (typeof enabled !== 'boolean') throw typeErr('GradScaler: enabled must be a boolean');
      for (const [k, v] of Object.entries({ initScale, growthFactor, backoffFactor, growthInterval })) {
        if (typeof v !== 'number' || Number.isNaN(v)) throw typeErr(`GradScaler: ${k} must be a number`);
      }
      this._enabled = enabled;
      if (enabled) {
        if (!(growthFactor > 1.0)) throw err('The growth factor must be > 1.0.');
        if (!(backoffFactor < 1.0)) throw err('The backoff factor must be < 1.0.');
        if (!Number.isInteger(growthInterval) || growthInterval <= 0) throw err('growthInterval must be a positive integer.');
        this._initScale = initScale;
        this._scale = null; // a 1-element float32 tensor, made lazily on the loss's device
        this._growthFactor = growthFactor;
        this._backoffFactor = backoffFactor;
        this._growthInterval = growthInterval;
        this._initGrowthTracker = 0;
        this._growthTracker = null; // 1-element int32
        this._perOptimizerStates = new Map();
      }
    }

    _checkScaleGrowthTracker(funcname) {
      const fix = 'This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.';
      if (this._scale === null) throw err(`Attempted ${funcname} but _scale is None.  ${fix}`);
      if (this._growthTracker === null) throw err(`Attempted ${funcname} but _growth_tracker is None.  ${fix}`);
      return [this._scale, this._growthTracker];
    }

    // The scaler's state lives as long as the scaler: kept out of the kd.tidy scope that the
    // first scale() usually runs in (a training step), which would otherwise dispose it.
    _lazyInit(device) {
      this._scale = kd.keep(kd.full([1], this._initScale, { dtype: 'float32', device }));
      this._growthTracker = kd.keep(kd.full([1], this._initGrowthTracker, { dtype: 'int32', device }));
    }

    _state(optimizer) {
      let s = this._perOptimizerStates.get(optimizer);
      if (!s) { s = freshState(); this._perOptimizerStates.set(optimizer, s); }
      return s;
    }

    /** Multiplies a tensor (or every tensor of a nested array) by the scale factor. */
    scale(outputs) {
      if (!this._enabled) return outputs;
      const one = (t) => {
        if (this._scale === null) this._lazyInit(t.device);
        return t.mul(this._scale.device === t.device ? this._scale : this._scale.to(t.device));
      };
      if (outputs instanceof Tensor) return one(outputs);
      const apply = (v) => {
        if (v instanceof Tensor) return one(v);
        if (Array.isArray(v)) return v.map(apply);
        throw typeErr('outputs must be a Tensor or an iterable of Tensors');
      };
      return apply(outputs);
    }

    // PyTorch's _unscale_grads_: one fused call per device over the optimizer's gradients.
    _unscaleGrads(optimizer, invScale, foundInf, allowFp16) {
      const perDevice = new Map();
      return kd.noGrad(() => {
        for (const group of optimizer.paramGroups) {
          for (const p of group.params) {
            const g = p.grad;
            if (g === null) continue;
            if (!allowFp16 && g.dtype === 'float16') throw err('Attempting to unscale FP16 gradients.');
            const dev = g.device;
            if (!perDevice.has(dev)) perDevice.set(dev, []);
            perDevice.get(dev).push(g);
          }
        }
        const found = new Map();
        for (const [dev, grads] of perDevice) {
          const f = foundInf.device === dev ? foundInf : kd.full([1], 0.0, { dtype: 'float32', device: dev });
          const inv = invScale.device === dev ? invScale : invScale.to(dev);
          I.ampForeachNonFiniteCheckAndUnscale_(grads, f, inv);
          found.set(dev, f);
        }
        return found;
      });
    }

    /** Divides ("unscales") the optimizer's gradients by the scale, in place; once per step. */
    unscale_(optimizer) {
      if (!this._enabled) return;
      this._checkScaleGrowthTracker('unscale_');
      const st = this._state(optimizer);
      if (st.stage === UNSCALED) throw err('unscale_() has already been called on this optimizer since the last update().');
      if (st.stage === STEPPED) throw err('unscale_() is being called after step().');
      // FP32 division can be imprecise for certain compile options, so carry out the reciprocal in FP64.
      const invScale = kd.noGrad(() => this._scale.to('float64').reciprocal().to('float32'));
      const foundInf = kd.full([1], 0.0, { dtype: 'float32', device: this._scale.device });
      st.foundInfPerDevice = this._unscaleGrads(optimizer, invScale, foundInf, false);
      st.stage = UNSCALED;
    }

    /** Unscales the gradients (unless unscale_ ran) and calls optimizer.step(...args) unless
     * one of them is inf/NaN. Returns what optimizer.step returned (undefined when skipped). */
    step(optimizer, ...args) {
      if (!this._enabled) return optimizer.step(...args);
      if (args.length && args[args.length - 1] && typeof args[args.length - 1] === 'object' && 'closure' in args[args.length - 1]) {
        throw err('Closure use is not currently supported if GradScaler is enabled.');
      }
      this._checkScaleGrowthTracker('step');
      const st = this._state(optimizer);
      if (st.stage === STEPPED) throw err('step() has already been called since the last update().');
      if (st.stage === READY) this.unscale_(optimizer);
      if (st.foundInfPerDevice.size === 0) throw err('No inf checks were recorded for this optimizer.');
      let retval;
      let found = 0;
      for (const f of st.foundInfPerDevice.values()) found += f.item();
      if (!found) retval = optimizer.step(...args);
      st.stage = STEPPED;
      return retval;
    }

    /** Updates the scale: backoff after a step with inf/NaN gradients, growth after
     * growthInterval clean steps; or sets it to newScale (a number or a 1-element float32 tensor). */
    update(newScale) {
      if (!this._enabled) return;
      const [scale, tracker] = this._checkScaleGrowthTracker('update');
      kd.noGrad(() => {
        if (newScale !== undefined && newScale !== null) {
          if (typeof newScale === 'number') scale.fill_(newScale);
          else {
            const reason = 'newScale should be a float or a 1-element float32 Tensor with requiresGrad=false.';
            if (!(newScale instanceof Tensor) || newScale.dtype !== 'float32' || newScale.numel() !== 1 || newScale.requiresGrad) throw err(reason);
            scale.copy_(newScale);
          }
        } else {
          const founds = [];
          for (const s of this._perOptimizerStates.values()) for (const f of s.foundInfPerDevice.values()) founds.push(f);
          if (founds.length === 0) throw err('No inf checks were recorded prior to update.');
          let combined = founds[0].device === scale.device ? founds[0] : founds[0].to(scale.device);
          for (let i = 1; i < founds.length; i++) combined = combined.add(founds[i].to(scale.device));
          I.ampUpdateScale_(scale, tracker, combined, this._growthFactor, this._backoffFactor, this._growthInterval);
        }
      });
      this._perOptimizerStates = new Map();
    }

    /** The current scale as a number (initScale before the first scale(); 1 when disabled). */
    getScale() {
      if (!this._enabled) return 1.0;
      return this._scale === null ? this._initScale : this._scale.item();
    }
    getGrowthFactor() { return this._growthFactor; }
    setGrowthFactor(v) { this._growthFactor = v; }
    getBackoffFactor() { return this._backoffFactor; }
    setBackoffFactor(v) { this._backoffFactor = v; }
    getGrowthInterval() { return this._growthInterval; }
    setGrowthInterval(v) { this._growthInterval = v; }
    _getGrowthTracker() {
      if (!this._enabled) return 0;
      return this._growthTracker === null ? this._initGrowthTracker : this._growthTracker.item();
    }
    isEnabled() { return this._enabled; }

    /** {scale, growthFactor, backoffFactor, growthInterval, _growthTracker}; {} when disabled. */
    stateDict() {
      if (!this._enabled) return {};
      return { scale: this.getScale(), growthFactor: this._growthFactor, backoffFactor: this._backoffFactor,
        growthInterval: this._growthInterval, _growthTracker: this._getGrowthTracker() };
    }

    /** Loads a stateDict(). */
    loadStateDict(stateDict) {
      if (!this._enabled) return;
      if (!stateDict || typeof stateDict !== 'object' || Object.keys(stateDict).length === 0) {
        throw err('The source state dict is empty, possibly because it was saved from a scaler instance with enabled=False.');
      }
      this._initScale = stateDict.scale;
      if (this._scale !== null) this._scale.fill_(stateDict.scale);
      this._growthFactor = stateDict.growthFactor;
      this._backoffFactor = stateDict.backoffFactor;
      this._growthInterval = stateDict.growthInterval;
      this._initGrowthTracker = stateDict._growthTracker;
      if (this._growthTracker !== null) this._growthTracker.fill_(stateDict._growthTracker);
    }
  }

  kd.amp = { autocast, GradScaler };
  return kd.amp;
};
