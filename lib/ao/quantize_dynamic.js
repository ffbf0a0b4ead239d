// quantize_dynamic.js - kd.ao.quantization.quantizeDynamic: PyTorch 1.13's quantize_dynamic.
// Picks a qconfig per submodule (propagate_qconfig_: by class, then by submodule name, else the
// parent's) and swaps every kd.nn.Linear, LSTM and GRU that has one for its
// kd.ao.nn.quantized.dynamic counterpart (convert); the root itself is never swapped, as in PyTorch. Returns a quantized copy, or the
// model itself with inplace.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installQuantizeDynamic(kd, { QConfig, defaultDynamicQConfig }, dynamic) {
  const dtypeName = (d) => String(d === undefined || d === null ? 'qint8' : d).replace(/^torch\./, '');
  const isQConfig = (q) => q === null || q instanceof QConfig || (q && typeof q === 'object' && 'weight' in q);

  /** The module classes quantizeDynamic maps (PyTorch's default dynamic mapping, as far as kindling has them). */
  const defaultMapping = () => new Map([[kd.nn.Linear, dynamic.Linear], [kd.nn.LSTM, dynamic.LSTM], [kd.nn.GRU, dynamic.GRU]]);

  function qconfigFor(dtype, what) {
    if (dtype === 'qint8') return defaultDynamicQConfig;
    if (dtype === 'float16') {
      throw new KindlingError(`${what}: float16 dynamic quantization is not supported (PyTorch's oneDNN engine does not ` +
        'support it either: quantized::linear_prepack_fp16); use qint8', 'KD_NOT_SUPPORTED');
    }
    if (dtype === 'quint8' || dtype === 'quint4x2') {
      throw new KindlingError(`${what}: ${dtype} (weight-only quantization of Embedding / EmbeddingBag) is not supported; use qint8`,
        'KD_NOT_SUPPORTED');
    }
    throw new KindlingError(`Don't know how to quantize with default settings for ${dtype}. Provide full qconfig please`,
      'KD_INVALID_ARGUMENT');
  }

  /** A Map of keys (module classes or submodule names) to qconfigs. */
  function specMap(spec, dtype, mapping, names) {
    const out = new Map();
    const key = (k) => {
      if (typeof k === 'function') return k;
      if (typeof k === 'string') {
        if (names.has(k)) return k;
        const cls = kd.nn[k];
        if (typeof cls === 'function' && cls.prototype instanceof kd.nn.Module) return cls; // a class name: 'Linear'
        return k;
      }
      throw typeError(`quantizeDynamic: qconfigSpec keys must be module classes or submodule names, got ${typeof k}`);
    };
    if (spec === null || spec === undefined) {
      const q = qconfigFor(dtype, 'quantizeDynamic');
      for (const cls of mapping.keys()) out.set(cls, q);
    } else if (spec instanceof Set || Array.isArray(spec)) {
      const items = [...spec];
      if (items.some((k) => isQConfig(k) && typeof k !== 'string' && typeof k !== 'function')) {
        throw typeError('quantizeDynamic: a Set/array qconfigSpec holds module classes or names; give a dict for qconfigs');
      }
      const q = qconfigFor(dtype, 'quantizeDynamic');
      for (const k of items) out.set(key(k), q);
    } else if (spec instanceof Map || (typeof spec === 'object')) {
      const entries = spec instanceof Map ? [...spec] : Object.entries(spec);
      for (const [k, q] of entries) {
        if (!isQConfig(q)) throw typeError(`quantizeDynamic: the qconfig of '${typeof k === 'function' ? k.name : k}' must be a QConfig or null`);
        out.set(key(k), q);
      }
    } else {
      throw typeError(`quantizeDynamic: qconfigSpec must be a Set, an array, a dict or null, got ${typeof spec}`);
    }
    return out;
  }

  /**
   * quantizeDynamic(model, qconfigSpec = null, dtype = 'qint8', mapping = null, inplace = false),
   * or quantizeDynamic(model, qconfigSpec, {dtype, mapping, inplace}).
   */
  function quantizeDynamic(model, qconfigSpec = null, dtype = 'qint8', mapping = null, inplace = false) {
    if (dtype && typeof dtype === 'object') ({ dtype = 'qint8', mapping = null, inplace = false } = dtype);
    if (!(model instanceof kd.nn.Module)) throw typeError('quantizeDynamic: model must be a kd.nn.Module');
    const dt = dtypeName(dtype);
    const map = mapping ? (mapping instanceof Map ? mapping : new Map(Object.entries(mapping))) : defaultMapping();
    if (!inplace) model = kd.nn._copyModule(model);
    const named = model.namedModules({ removeDuplicate: false });
    const spec = specMap(qconfigSpec, dt, map, new Set(named.map((e) => e[0])));
    // propagate_qconfig_: a module's own entry by class, then by name, else its parent's
    const qconfigOf = new Map();
    const walk = (m, prefix, parentQ) => {
      let q = spec.has(m.constructor) ? spec.get(m.constructor) : parentQ;
      if (spec.has(prefix)) q = spec.get(prefix);
      qconfigOf.set(m, q);
      for (const [name, c] of m.namedChildren()) walk(c, prefix ? `${prefix}.${name}` : name, q);
    };
    walk(model, '', spec.has('') ? spec.get('') : null);
    // convert: swap the children whose exact class is mapped and who have a qconfig
    const swap = (m) => {
      // MultiheadAttention reads its out projection's weight directly (PyTorch's out_proj is a
      // NonDynamicallyQuantizableLinear for that reason)
      const keep = kd.nn.MultiheadAttention && m instanceof kd.nn.MultiheadAttention;
      for (const [name, c] of m.namedChildren()) {
        const q = qconfigOf.get(c);
        const target = map.get(c.constructor);
        if (!keep && target && q) {
          const prop = Object.keys(m).find((k) => m[k] === c);
          m[prop] = target.fromFloat(c, q);
        } else {
          swap(c);
        }
        void name;
      }
    };
    swap(model);
    return model;
  }
  return { quantizeDynamic, defaultMapping };
};
