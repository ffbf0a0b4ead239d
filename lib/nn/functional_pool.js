// functional_pool.js - the kd.nn.functional pools beyond the native 2-D ones: maxPool1d/3d,
// avgPool1d/3d, adaptiveAvgPool1d/3d, adaptiveMaxPool1d/2d/3d, fractionalMaxPool2d/3d (with their
// *WithIndices forms and returnIndices), lpPool1d/2d and maxUnpool1d/2d/3d.
// 1-D pools are the native 2-D ones over (N, C, 1, L); adaptive average pooling is separable, so
// 3-D goes through the 2-D pool twice. The others share one mechanism, Note [Pooling by gather]:
// the input's planes are flattened and one slot (the fill: -inf for max, 0 for sums) appended;
// every output position lists its window's flat input positions (the fill slot for padding),
// one gather (indexSelect, or gather when windows differ per plane) makes (N, C, *out, K), and a
// max or sum over K finishes. The indices returned are the flat positions in each input plane
// (d * H * W + h * W + w), as PyTorch's. Composed of kindling ops: any device, autograd through
// the gather. Checks and messages follow PyTorch 1.13's (Pool.h pool2d_shape_check, ...).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installFunctionalPool(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const bad = (m, code = 'KD_INVALID_ARGUMENT') => new KindlingError(m, code);
  const fmt = (a) => `[${a.join(', ')}]`;
  const list = (v, n, what) => {
    const a = Array.isArray(v) ? v.slice() : Array(n).fill(v);
    if (a.length === 1 && n > 1) return Array(n).fill(a[0]);
    if (a.length !== n || !a.every((x) => Number.isInteger(x))) throw typeError(`${what} must be an int or a list of ${n} ints, got ${JSON.stringify(v)}`);
    return a;
  };
  const isList = (v) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);
  const tensorArg = (t, what) => {
    if (!(t instanceof kd.Tensor)) throw typeError(`${what}(): argument 'input' must be Tensor, not ${t === null ? 'None' : typeof t}`);
    return t;
  };
  // (N, C, *sp) with nd spatial dims: batched view of input (unbatched (C, *sp) gets N = 1)
  function batched(input, nd, what) {
    if (input.ndim !== nd + 1 && input.ndim !== nd + 2) {
      throw bad(`non-empty ${nd + 1}D or ${nd + 2}D (batch mode) tensor expected for input`, 'KD_SHAPE_MISMATCH');
    }
    const x = input.ndim === nd + 1 ? input.unsqueeze(0) : input;
    const empty = input.shape.findIndex((v, i) => i >= input.ndim - nd - 1 && v === 0);
    if (empty >= 0) {
      throw bad(`${what}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ${fmt(input.shape)} with dimension ${empty} being empty`, 'KD_SHAPE_MISMATCH');
    }
    return [x, input.ndim === nd + 1];
  }

  // Note [Pooling by gather]: x (N, C, *sp); pos: Int32Array/Array of prod(out) * K flat plane
  // positions (-1 = the fill slot), or per plane (N * C * prod(out) * K) when perPlane.
  function gatherWindows(x, out, k, pos, fill, perPlane) {
    const [n, c] = x.shape;
    const s = x.shape.slice(2).reduce((a, b) => a * b, 1);
    const flat = F.pad(x.reshape([n, c, s]), [0, 1], 'constant', fill);
    const idx = Array.from(pos, (p) => (p < 0 ? s : p));
    const index = kd.tensor(idx, { dtype: 'int64', device: x.device });
    const g = perPlane ? flat.gather(2, index.view(n, c, -1)) : flat.indexSelect(2, index);
    return g.view(n, c, ...out, k);
  }
  // The output of a max over windows, and its flat input positions
  function maxWindows(x, out, k, pos, perPlane) {
    if (!x.dtype.startsWith('float') && x.dtype !== 'bfloat16') throw bad(`"max_pool" not implemented for '${x.dtype}'`, 'KD_NOT_SUPPORTED');
    const g = gatherWindows(x, out, k, pos, -Infinity, perPlane);
    const [values, arg] = g.max(-1);
    const posT = kd.tensor(Array.from(pos), { dtype: 'int64', device: x.device });
    const view = perPlane ? posT.view(...g.shape) : posT.view(1, 1, ...out, k).expand(g.shape);
    const indices = view.gather(-1, arg.unsqueeze(-1)).squeeze(-1);
    arg.dispose();
    return [values, indices];
  }
  // Flat window positions of a grid of windows: per dim an array of out * k positions (-1 outside).
  function gridPositions(sp, out, k, perDim) {
    const nd = sp.length;
    const strides = sp.map((_, i) => sp.slice(i + 1).reduce((a, b) => a * b, 1));
    const o = out.reduce((a, b) => a * b, 1), kk = k.reduce((a, b) => a * b, 1);
    const pos = new Float64Array(o * kk);
    const oi = new Array(nd).fill(0), ki = new Array(nd).fill(0);
    for (let a = 0; a < o; a++) {
      let r = a;
      for (let i = nd - 1; i >= 0; i--) { oi[i] = r % out[i]; r = Math.floor(r / out[i]); }
      for (let b = 0; b < kk; b++) {
        let q = b, p = 0;
        for (let i = nd - 1; i >= 0; i--) { ki[i] = q % k[i]; q = Math.floor(q / k[i]); }
        for (let i = 0; i < nd && p >= 0; i++) {
          const v = perDim[i][oi[i] * k[i] + ki[i]];
          p = v < 0 ? -1 : p + v * strides[i];
        }
        pos[a * kk + b] = p;
      }
    }
    return pos;
  }

  // PyTorch's pooling_output_shape
  function poolOut(size, k, pad, s, d, ceil) {
    let o = Math.floor((size + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
    if (ceil && (o - 1) * s >= size + pad) o--;
    return o;
  }
  // kernelSize, stride, padding, dilation of an nd pool, checked as PyTorch's pool*_shape_check
  function poolGeometry(what, nd, x, o, withDilation) {
    const k = list(o.kernelSize, nd, 'kernel_size');
    const s = isList(o.stride) ? k.slice() : list(o.stride, nd, 'stride');
    const p = list(o.padding === undefined ? 0 : o.padding, nd, 'padding');
    const d = withDilation ? list(o.dilation === undefined || o.dilation === null ? 1 : o.dilation, nd, 'dilation') : Array(nd).fill(1);
    const names = nd === 3 ? ['T', 'H', 'W'] : ['H', 'W'].slice(2 - nd);
    const show = (pre, a) => a.map((v, i) => `${pre}${names[i]}: ${v}`).join(' ');
    if (s.some((v) => v === 0)) throw bad('stride should not be zero');
    if (k.some((v) => v <= 0)) throw bad(`kernel size should be greater than zero, but got ${show('k', k)}`);
    if (s.some((v) => v < 0)) throw bad(`stride should be greater than zero, but got ${show('d', s)}`);
    if (d.some((v) => v <= 0)) throw bad(`dilation should be greater than zero, but got ${show('dilation', d)}`);
    if (p.some((v, i) => v < 0 || v > Math.floor(k[i] / 2))) {
      const given = (v, a) => (Array.isArray(v) ? `(${a.join(', ')})` : String(a[0]));
      throw bad(`pad should be at most half of kernel size, but got pad=${given(o.padding, p)} and kernel_size=${given(o.kernelSize, k)}`);
    }
    const sp = x.shape.slice(2);
    const out = sp.map((v, i) => poolOut(v, k[i], p[i], s[i], d[i], !!o.ceilMode));
    if (out.some((v) => v < 1)) {
      throw bad(`Given input size: (${x.shape.slice(1).join('x')}). Calculated output size: (${[x.shape[1], ...out].join('x')}). Output size is too small`);
    }
    return { k, s, p, d, sp, out };
  }
  const returnIndicesForm = (withIdx, riAt) => function pool(...args) {
    const last = args[args.length - 1];
    const opts = last !== null && typeof last === 'object' && !Array.isArray(last) && !(last instanceof kd.Tensor) ? last : null;
    const ri = opts && opts.returnIndices !== undefined ? opts.returnIndices : args[riAt];
    const r = withIdx(...args);
    if (ri === true) return r;
    r[1].dispose();
    return r[0];
  };
  const pair = (values, indices) => Object.assign([values, indices], { values, indices });

  // ---- max pooling
  function maxPoolNd(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'kernelSize', 'stride', 'padding', 'dilation', 'ceilMode', 'returnIndices'],
      { stride: null, padding: 0, dilation: 1, ceilMode: false, returnIndices: false });
    const [x, unb] = batched(tensorArg(o.input, what), nd, what);
    const g = poolGeometry(what, nd, x, o, true);
    const perDim = g.sp.map((size, i) => {
      const a = new Array(g.out[i] * g.k[i]);
      for (let oo = 0; oo < g.out[i]; oo++) {
        for (let j = 0; j < g.k[i]; j++) {
          const v = oo * g.s[i] - g.p[i] + j * g.d[i];
          a[oo * g.k[i] + j] = v >= 0 && v < size ? v : -1;
        }
      }
      return a;
    });
    const kk = g.k.reduce((a, b) => a * b, 1);
    const [v, i] = maxWindows(x, g.out, kk, gridPositions(g.sp, g.out, g.k, perDim), false);
    return unb ? pair(v.squeeze(0), i.squeeze(0)) : pair(v, i);
  }
  /** 1-D max pooling of (N, C, L) or (C, L). maxPool1d(input, kernelSize, stride=kernelSize, padding=0, dilation=1, ceilMode=false, returnIndices=false). */
  F.maxPool1dWithIndices = function maxPool1dWithIndices(...args) {
    const o = parseArgs('max_pool1d()', args, ['input', 'kernelSize', 'stride', 'padding', 'dilation', 'ceilMode', 'returnIndices'],
      { stride: null, padding: 0, dilation: 1, ceilMode: false, returnIndices: false });
    const x = tensorArg(o.input, 'max_pool1d');
    if (x.ndim !== 2 && x.ndim !== 3) throw bad(`max_pool1d() Expected 2D or 3D input tensor, but got ${fmt(x.shape)}`, 'KD_SHAPE_MISMATCH');
    const one = (v, def, what) => (isList(v) ? def : list(v, 1, what)[0]);
    const k = one(o.kernelSize, null, 'kernel_size');
    const st = one(o.stride, k, 'stride'), p = one(o.padding, 0, 'padding'), dl = one(o.dilation, 1, 'dilation');
    // PyTorch 1.13's max_pool1d checks (MaxPooling.cpp)
    if (k <= 0) throw bad(`max_pool1d() kernel_size must be greater than zero, but got ${k}`);
    if (st <= 0) throw bad(`max_pool1d() stride must be greater than zero, but got ${st}`);
    if (p < 0) throw bad(`max_pool1d() padding must be non-negative, but got ${p}`);
    if (p > Math.floor(k / 2)) throw bad(`max_pool1d() padding should be at most half of kernel size, but got padding=${p} and kernel_size=${k}`);
    if (dl <= 0) throw bad(`max_pool1d() dilation must be greater than zero, but got ${dl}`);
    const l = x.shape[x.ndim - 1];
    const ol = poolOut(l, k, p, st, dl, !!o.ceilMode);
    if (ol < 0) throw bad(`max_pool1d() Invalid computed output size: ${ol}`);
    const [v, i] = F.maxPool2dWithIndices(x.unsqueeze(-2), [1, k], [1, st], [0, p], [1, dl], o.ceilMode);
    return pair(v.squeeze(-2), i.squeeze(-2));
  };
  F.maxPool1d = returnIndicesForm(F.maxPool1dWithIndices, 6);
  /** 3-D max pooling of (N, C, D, H, W) or (C, D, H, W); indices are flat d * H * W + h * W + w.
   * maxPool3d(input, kernelSize, stride=kernelSize, padding=0, dilation=1, ceilMode=false, returnIndices=false). */
  F.maxPool3dWithIndices = function maxPool3dWithIndices(...args) { return maxPoolNd('max_pool3d', 3, args); };
  F.maxPool3d = returnIndicesForm(F.maxPool3dWithIndices, 6);

  // ---- average pooling
  /** 1-D average pooling. avgPool1d(input, kernelSize, stride=kernelSize, padding=0, ceilMode=false, countIncludePad=true). */
  F.avgPool1d = function avgPool1d(...args) {
    const o = parseArgs('avg_pool1d()', args, ['input', 'kernelSize', 'stride', 'padding', 'ceilMode', 'countIncludePad'],
      { stride: null, padding: 0, ceilMode: false, countIncludePad: true });
    const x = tensorArg(o.input, 'avg_pool1d');
    if (x.ndim !== 2 && x.ndim !== 3) throw bad(`avg_pool1d: Expected 2D or 3D input tensor, but got ${fmt(x.shape)}`, 'KD_SHAPE_MISMATCH');
    const k = list(o.kernelSize, 1, 'kernel_size')[0];
    const s = isList(o.stride) ? k : list(o.stride, 1, 'stride')[0];
    const p = list(o.padding, 1, 'padding')[0];
    return F.avgPool2d(x.unsqueeze(-2), [1, k], [1, s], [0, p], o.ceilMode, o.countIncludePad).squeeze(-2);
  };
  /** 3-D average pooling. avgPool3d(input, kernelSize, stride=kernelSize, padding=0, ceilMode=false, countIncludePad=true, divisorOverride=null). */
  F.avgPool3d = function avgPool3d(...args) {
    const o = parseArgs('avg_pool3d()', args, ['input', 'kernelSize', 'stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride'],
      { stride: null, padding: 0, ceilMode: false, countIncludePad: true, divisorOverride: null });
    const [x, unb] = batched(tensorArg(o.input, 'avg_pool3d'), 3, 'avg_pool3d');
    if (o.divisorOverride !== null && o.divisorOverride !== undefined && o.divisorOverride === 0) throw bad('divisor must be not zero');
    const g = poolGeometry('avg_pool3d', 3, x, o, false);
    const perDim = [], div = [];
    g.sp.forEach((size, i) => {
      const a = new Array(g.out[i] * g.k[i]), dv = new Array(g.out[i]);
      for (let oo = 0; oo < g.out[i]; oo++) {
        const start = oo * g.s[i] - g.p[i];
        const end = Math.min(start + g.k[i], size + g.p[i]);
        dv[oo] = o.countIncludePad ? end - start : Math.min(end, size) - Math.max(start, 0);
        for (let j = 0; j < g.k[i]; j++) {
          const v = start + j;
          a[oo * g.k[i] + j] = v >= 0 && v < size ? v : -1;
        }
      }
      perDim.push(a);
      div.push(dv);
    });
    const kk = g.k.reduce((a, b) => a * b, 1);
    const sum = gatherWindows(x, g.out, kk, gridPositions(g.sp, g.out, g.k, perDim), 0, false).sum(-1);
    let out;
    if (o.divisorOverride !== null && o.divisorOverride !== undefined) out = sum.div(o.divisorOverride);
    else {
      const d = [];
      for (const a of div[0]) for (const b of div[1]) for (const c of div[2]) d.push(a * b * c);
      out = sum.div(kd.tensor(d, { dtype: x.dtype, device: x.device }).view(...g.out));
    }
    return unb ? out.squeeze(0) : out;
  };

  // ---- adaptive pooling
  const adaptiveSizes = (what, x, nd, size) => {
    const sp = x.shape.slice(-nd);
    const out = (Array.isArray(size) ? size : Array(nd).fill(size)).map((v, i) => (v === null || v === undefined ? sp[i] : v));
    if (out.length !== nd) throw bad(`${what}: internal error: output_size.size() must be ${nd}`);
    if (out.some((v) => !Number.isInteger(v) || v < 0)) throw bad(`${what}: elements of output_size must be greater than or equal to 0 but received {${out.join(', ')}}`);
    return out;
  };
  /** 1-D adaptive average pooling to outputSize. adaptiveAvgPool1d(input, outputSize). */
  F.adaptiveAvgPool1d = function adaptiveAvgPool1d(...args) {
    const o = parseArgs('adaptive_avg_pool1d()', args, ['input', 'outputSize']);
    const x = tensorArg(o.input, 'adaptive_avg_pool1d');
    if (x.ndim !== 2 && x.ndim !== 3) throw bad(`adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got ${fmt(x.shape)}`, 'KD_SHAPE_MISMATCH');
    const [l] = adaptiveSizes('adaptive_avg_pool1d', x, 1, Array.isArray(o.outputSize) ? o.outputSize : [o.outputSize]);
    return F.adaptiveAvgPool2d(x.unsqueeze(-2), [1, l]).squeeze(-2);
  };
  /** 3-D adaptive average pooling to outputSize (D, H, W); null keeps the input's size. adaptiveAvgPool3d(input, outputSize). */
  F.adaptiveAvgPool3d = function adaptiveAvgPool3d(...args) {
    const o = parseArgs('adaptive_avg_pool3d()', args, ['input', 'outputSize']);
    const input = tensorArg(o.input, 'adaptive_avg_pool3d');
    const [x, unb] = batched(input, 3, 'adaptive_avg_pool3d');
    const [od, oh, ow] = adaptiveSizes('adaptive_avg_pool3d', x, 3, o.outputSize);
    const [n, c, d, h, w] = x.shape;
    // the bins are products of per-dim intervals: pool (H, W), then (D, 1) over the flattened rest
    const hw = F.adaptiveAvgPool2d(x.reshape([n, c * d, h, w]), [oh, ow]);
    const out = F.adaptiveAvgPool2d(hw.reshape([n, c, d, oh * ow]), [od, oh * ow]).reshape([n, c, od, oh, ow]);
    return unb ? out.squeeze(0) : out;
  };
  function adaptiveMaxNd(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'outputSize', 'returnIndices'], { returnIndices: false });
    const [x, unb] = batched(tensorArg(o.input, what), nd, what);
    const out = adaptiveSizes(what, x, nd, nd === 1 && !Array.isArray(o.outputSize) ? [o.outputSize] : o.outputSize);
    const sp = x.shape.slice(2);
    const k = [], perDim = [];
    sp.forEach((size, i) => {
      const starts = [], ends = [];
      for (let a = 0; a < out[i]; a++) { starts.push(Math.floor((a * size) / out[i])); ends.push(Math.ceil(((a + 1) * size) / out[i])); }
      const kk = Math.max(1, ...starts.map((s0, a) => ends[a] - s0));
      const pos = new Array(out[i] * kk);
      for (let a = 0; a < out[i]; a++) for (let j = 0; j < kk; j++) pos[a * kk + j] = Math.min(starts[a] + j, ends[a] - 1);
      k.push(kk);
      perDim.push(pos);
    });
    const kk = k.reduce((a, b) => a * b, 1);
    const [v, i] = maxWindows(x, out, kk, gridPositions(sp, out, k, perDim), false);
    return unb ? pair(v.squeeze(0), i.squeeze(0)) : pair(v, i);
  }
  /** 1-D adaptive max pooling. adaptiveMaxPool1d(input, outputSize, returnIndices=false). */
  F.adaptiveMaxPool1dWithIndices = function adaptiveMaxPool1dWithIndices(...args) { return adaptiveMaxNd('adaptive_max_pool1d', 1, args); };
  F.adaptiveMaxPool1d = returnIndicesForm(F.adaptiveMaxPool1dWithIndices, 2);
  /** 2-D adaptive max pooling. adaptiveMaxPool2d(input, outputSize, returnIndices=false). */
  F.adaptiveMaxPool2dWithIndices = function adaptiveMaxPool2dWithIndices(...args) { return adaptiveMaxNd('adaptive_max_pool2d', 2, args); };
  F.adaptiveMaxPool2d = returnIndicesForm(F.adaptiveMaxPool2dWithIndices, 2);
  /** 3-D adaptive max pooling. adaptiveMaxPool3d(input, outputSize, returnIndices=false). */
  F.adaptiveMaxPool3dWithIndices = function adaptiveMaxPool3dWithIndices(...args) { return adaptiveMaxNd('adaptive_max_pool3d', 3, args); };
  F.adaptiveMaxPool3d = returnIndicesForm(F.adaptiveMaxPool3dWithIndices, 2);

  // ---- fractional max pooling
  function fractionalNd(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'kernelSize', 'outputSize', 'outputRatio', 'returnIndices', '_randomSamples'],
      { outputSize: null, outputRatio: null, returnIndices: false, _randomSamples: null });
    const [x, unb] = batched(tensorArg(o.input, what), nd, what);
    const k = list(o.kernelSize, nd, 'kernel_size');
    const sp = x.shape.slice(2);
    if (o.outputSize === null && o.outputRatio === null) {
      throw bad(`${what} requires specifying either an output_size or an output_ratio`);
    }
    let out;
    if (o.outputSize !== null) out = list(o.outputSize, nd, 'output_size');
    else {
      const r = Array.isArray(o.outputRatio) ? o.outputRatio : Array(nd).fill(o.outputRatio);
      out = sp.map((v, i) => Math.trunc(v * r[i]));
    }
    // PyTorch 1.13: 2-D allows out + k - 1 == input, 3-D does not
    const names = nd === 2 ? ['height', 'width'] : ['time', 'height', 'width'];
    sp.forEach((v, i) => {
      if (nd === 2 ? out[i] + k[i] - 1 > v : out[i] + k[i] - 1 >= v) {
        throw bad(`${nd === 2 ? what : `${what}_out`}(): pool ${names[i]} ${k[i]} too large relative to input ${names[i]} ${v}`);
      }
    });
    const [n, c] = x.shape;
    let samples = o._randomSamples;
    if (samples === null) samples = kd.rand([n, c, nd], { dtype: x.dtype, device: x.device });
    if (samples.ndim !== 3 || samples.shape[0] !== n || samples.shape[1] !== c || samples.shape[2] !== nd) {
      throw bad(`${what}(): expected _random_samples of shape [${n}, ${c}, ${nd}], got ${fmt(samples.shape)}`, 'KD_SHAPE_MISMATCH');
    }
    const u = Array.from(samples.detach().to({ device: 'cpu', dtype: 'float64' }).dataSync());
    // PyTorch's generate_intervals; the samples' order is (W, H) for 2-D and (T, H, W) for 3-D
    const dimOfSample = nd === 2 ? [1, 0] : [0, 1, 2];
    const kk = k.reduce((a, b) => a * b, 1), oo = out.reduce((a, b) => a * b, 1);
    const pos = new Float64Array(n * c * oo * kk);
    for (let pl = 0; pl < n * c; pl++) {
      const perDim = sp.map((size, i) => {
        const sample = u[pl * nd + dimOfSample[i]];
        const seq = new Array(out[i]);
        const alpha = out[i] > 1 ? (size - k[i]) / (out[i] - 1) : 0;
        for (let a = 0; a < out[i] - 1; a++) seq[a] = Math.trunc((a + sample) * alpha) - Math.trunc(sample * alpha);
        seq[out[i] - 1] = size - k[i];
        const win = new Array(out[i] * k[i]);
        for (let a = 0; a < out[i]; a++) for (let j = 0; j < k[i]; j++) win[a * k[i] + j] = seq[a] + j;
        return win;
      });
      pos.set(gridPositions(sp, out, k, perDim), pl * oo * kk);
    }
    const [v, i] = maxWindows(x, out, kk, pos, true);
    return unb ? pair(v.squeeze(0), i.squeeze(0)) : pair(v, i);
  }
  /** 2-D fractional max pooling (pseudo-random windows). fractionalMaxPool2d(input, kernelSize, outputSize=null, outputRatio=null, returnIndices=false, _randomSamples=null). */
  F.fractionalMaxPool2dWithIndices = function fractionalMaxPool2dWithIndices(...args) { return fractionalNd('fractional_max_pool2d', 2, args); };
  F.fractionalMaxPool2d = returnIndicesForm(F.fractionalMaxPool2dWithIndices, 4);
  /** 3-D fractional max pooling. fractionalMaxPool3d(input, kernelSize, outputSize=null, outputRatio=null, returnIndices=false, _randomSamples=null). */
  F.fractionalMaxPool3dWithIndices = function fractionalMaxPool3dWithIndices(...args) { return fractionalNd('fractional_max_pool3d', 3, args); };
  F.fractionalMaxPool3d = returnIndicesForm(F.fractionalMaxPool3dWithIndices, 4);

  // ---- power-average pooling
  function lpPool(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'normType', 'kernelSize', 'stride', 'ceilMode'], { stride: null, ceilMode: false });
    const x = tensorArg(o.input, what);
    const k = list(o.kernelSize, nd, 'kernel_size');
    const pooled = nd === 1 ? F.avgPool1d(x.pow(o.normType), k, o.stride, 0, o.ceilMode)
      : F.avgPool2d(x.pow(o.normType), k, isList(o.stride) ? null : o.stride, 0, o.ceilMode);
    return kd.sign(pooled).mul(F.relu(pooled.abs())).mul(k.reduce((a, b) => a * b, 1)).pow(1 / o.normType);
  }
  /** 1-D power-average pooling: (sum over the window of x^p)^(1/p). lpPool1d(input, normType, kernelSize, stride=kernelSize, ceilMode=false). */
  F.lpPool1d = function lpPool1d(...args) { return lpPool('lp_pool1d', 1, args); };
  /** 2-D power-average pooling. lpPool2d(input, normType, kernelSize, stride=kernelSize, ceilMode=false). */
  F.lpPool2d = function lpPool2d(...args) { return lpPool('lp_pool2d', 2, args); };

  // ---- max unpooling
  function maxUnpool(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'indices', 'kernelSize', 'stride', 'padding', 'outputSize'], { stride: null, padding: 0, outputSize: null });
    const input = tensorArg(o.input, what);
    if (!(o.indices instanceof kd.Tensor)) throw typeError(`${what}(): argument 'indices' must be Tensor`);
    const k = list(o.kernelSize, nd, 'kernel_size');
    const s = isList(o.stride) ? k.slice() : list(o.stride, nd, 'stride');
    const p = list(o.padding, nd, 'padding');
    const def = k.map((kk, i) => (input.shape[input.ndim - nd + i] - 1) * s[i] + kk - 2 * p[i]);
    let size = def;
    if (o.outputSize !== null && o.outputSize !== undefined) {
      let os = Array.isArray(o.outputSize) ? o.outputSize.slice() : [o.outputSize];
      if (os.length === nd + 2) os = os.slice(2);
      if (os.length !== nd) {
        throw bad(`output_size should be a sequence containing ${nd} or ${nd + 2} elements, but it has a length of '${os.length}'`);
      }
      os.forEach((v, i) => {
        if (!(def[i] - s[i] < v && v < def[i] + s[i])) {
          throw bad(`invalid output_size "${fmt(os)}" (dim ${i} must be between ${def[i] - s[i]} and ${def[i] + s[i]})`);
        }
      });
      size = os;
    }
    if (o.indices.dtype !== 'int64') throw bad(`elements in indices should be type int64 but got: ${o.indices.dtype}`, 'KD_DTYPE_MISMATCH');
    if (o.indices.shape.join() !== input.shape.join()) {
      throw bad(`Expected shape of indices to be same as that of the input tensor (${fmt(input.shape)}) but got indices tensor with shape: ${fmt(o.indices.shape)}`, 'KD_SHAPE_MISMATCH');
    }
    if (input.ndim !== nd + 1 && input.ndim !== nd + 2) {
      throw bad(`Input to ${what} should be a ${nd + 1}d or ${nd + 2}d Tensor, but got a tensor with ${input.ndim} dimensions.`, 'KD_SHAPE_MISMATCH');
    }
    const lead = input.shape.slice(0, input.ndim - nd);
    const planeIn = input.shape.slice(-nd).reduce((a, b) => a * b, 1);
    const planeOut = size.reduce((a, b) => a * b, 1);
    const idx = o.indices.reshape([...lead, planeIn]);
    if (idx.numel() > 0) {
      const [lo, hi] = [idx.min().item(), idx.max().item()];
      if (lo < 0 || hi >= planeOut) {
        throw bad(`Found an invalid max index: ${lo < 0 ? lo : hi} (output volumes are of size ${size.join('x')}${nd === 1 ? 'x1' : ''}`); // 1-D is 2-D of width 1
      }
    }
    const out = kd.zeros([...lead, planeOut], { dtype: input.dtype, device: input.device })
      .scatter(lead.length, idx, input.reshape([...lead, planeIn]));
    return out.view(...lead, ...size);
  }
  /** Partial inverse of maxPool1d: values put back at their indices, zeros elsewhere.
   * maxUnpool1d(input, indices, kernelSize, stride=kernelSize, padding=0, outputSize=null). */
  F.maxUnpool1d = function maxUnpool1d(...args) { return maxUnpool('max_unpool1d', 1, args); };
  /** Partial inverse of maxPool2d. maxUnpool2d(input, indices, kernelSize, stride=kernelSize, padding=0, outputSize=null). */
  F.maxUnpool2d = function maxUnpool2d(...args) { return maxUnpool('max_unpool2d', 2, args); };
  /** Partial inverse of maxPool3d. maxUnpool3d(input, indices, kernelSize, stride=kernelSize, padding=0, outputSize=null). */
  F.maxUnpool3d = function maxUnpool3d(...args) { return maxUnpool('max_unpool3d', 3, args); };
};
