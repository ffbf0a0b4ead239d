// functional_conv.js - kd.nn.functional.conv3d, convTranspose1d, convTranspose3d, unfold and fold,
// composed of kindling ops (any device; autograd through the ops):
//   conv3d           the depth dim is unrolled into channels (im2col over depth: the kD strided,
//                    dilated depth slices of the zero-padded input stacked per group), then one
//                    conv2d over (N * OD, groups * kD * C / groups, H, W).
//   convTranspose3d  the transposed convolution along depth is a convolution of the input with
//                    zeros inserted between depth planes (stride), padded by d * (k - 1) - p, with
//                    the depth-flipped kernel; its depth is unrolled as in conv3d and H, W go
//                    through one convTranspose2d.
//   convTranspose1d  convTranspose2d over (N, C, 1, L).
//   unfold / fold    sliding blocks as strided views of the padded input (unfold) and their sum
//                    back into the image with indexAdd (fold).
// Checks and messages follow PyTorch 1.13's (ConvUtils.h, torch.nn.functional.fold/unfold).
'use strict';

const { KindlingError, makeError, typeError } = require('../errors');

module.exports = function installFunctionalConv(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const bad = (m, code = 'KD_INVALID_ARGUMENT') => new KindlingError(m, code);
  const list = (v, n, what, def) => {
    if (v === null || v === undefined) v = def;
    const a = Array.isArray(v) ? v.slice() : Array(n).fill(v);
    if (a.length === 1 && n > 1) return Array(n).fill(a[0]);
    if (a.length !== n || !a.every(Number.isInteger)) throw typeError(`${what} must be an int or a list of ${n} ints, got ${JSON.stringify(v)}`);
    return a;
  };
  const fmt = (a) => `[${a.join(', ')}]`;
  const tensorArg = (t, what, name) => {
    if (!(t instanceof kd.Tensor)) throw typeError(`${what}(): argument '${name}' must be Tensor, not ${t === null ? 'None' : typeof t}`);
    return t;
  };
  // A view of x with the windows of `dim` appended as a last dim of size k (window i starts at
  // i * s; its elements are d apart).
  const windows = (x, dim, k, s, d) => x.unfold(dim, d * (k - 1) + 1, s).unfold(x.ndim, 1, d).squeeze(-1);

  // Shared checks of conv3d / convTranspose3d (PyTorch's check_shape_forward, in its words).
  function checkConv(what, x, w, b, groups, transposed, nd) {
    if (!Number.isInteger(groups) || groups <= 0) throw bad('non-positive groups is not supported');
    if (x.ndim !== nd + 1 && x.ndim !== nd + 2) {
      throw bad(`Expected ${nd + 1}D (unbatched) or ${nd + 2}D (batched) input to ${what}, but got input of size: ${fmt(x.shape)}`, 'KD_SHAPE_MISMATCH');
    }
    if (w.ndim !== nd + 2) {
      throw bad(`Expected ${nd + 2}-dimensional weight for ${what}, but got weight of size ${fmt(w.shape)}`, 'KD_SHAPE_MISMATCH');
    }
    const c = x.shape[x.ndim - nd - 1];
    if (!transposed) {
      if (w.shape[0] % groups !== 0) throw bad(`Given groups=${groups}, expected weight to be divisible by ${groups} at dimension 0, but got weight of size ${fmt(w.shape)} instead`);
      if (c !== w.shape[1] * groups) {
        throw bad(`Given groups=${groups}, weight of size ${fmt(w.shape)}, expected input${fmt(x.shape)} to have ${w.shape[1] * groups} channels, but got ${c} channels instead`, 'KD_SHAPE_MISMATCH');
      }
    } else if (c !== w.shape[0]) {
      throw bad(`Given transposed=1, weight of size ${fmt(w.shape)}, expected input${fmt(x.shape)} to have ${w.shape[0]} channels, but got ${c} channels instead`, 'KD_SHAPE_MISMATCH');
    }
    const o = transposed ? w.shape[1] * groups : w.shape[0];
    if (b !== null && (b.ndim !== 1 || b.shape[0] !== o)) {
      throw bad(`Given ${transposed ? 'transposed=1, ' : ''}weight of size ${fmt(w.shape)}, expected bias to be 1-dimensional with ${o} elements, but got bias of size ${fmt(b.shape)} instead`, 'KD_SHAPE_MISMATCH');
    }
  }
  const positive = (a, what) => {
    if (a.some((v) => v <= 0)) throw bad(`non-positive ${what} is not supported`);
  };

  // Depth-unrolled input: xp (N, C, Dp, H, W) -> (N * OD, groups * kD * C / groups, H, W), the
  // kD slices of each output depth (stride s, dilation d) stacked inside each group.
  function unrollDepth(xp, groups, kD, s, d) {
    const [n, c, dp, h, w] = xp.shape;
    const od = Math.floor((dp - d * (kD - 1) - 1) / s) + 1;
    const win = windows(xp, 2, kD, s, d); // (N, C, OD, H, W, kD)
    const x = win.reshape([n, groups, c / groups, od, h, w, kD]).permute(0, 3, 1, 6, 2, 4, 5);
    return [x.reshape([n * od, c * kD, h, w]), od];
  }

  /** 3-D convolution over (N, C, D, H, W) or (C, D, H, W); weight (O, C / groups, kD, kH, kW).
   * conv3d(input, weight, bias?, stride=1, padding=0 | 'same' | 'valid', dilation=1, groups=1). */
  F.conv3d = function conv3d(...args) {
    const o = parseArgs('conv3d()', args, ['input', 'weight', 'bias', 'stride', 'padding', 'dilation', 'groups'],
      { bias: null, stride: 1, padding: 0, dilation: 1, groups: 1 });
    const input = tensorArg(o.input, 'conv3d', 'input');
    const weight = tensorArg(o.weight, 'conv3d', 'weight');
    const groups = o.groups;
    checkConv('conv3d', input, weight, o.bias, groups, false, 3);
    const stride = list(o.stride, 3, 'stride', 1);
    const dilation = list(o.dilation, 3, 'dilation', 1);
    positive(stride, 'stride');
    positive(dilation, 'dilation');
    const k = weight.shape.slice(2);
    const unbatched = input.ndim === 4;
    const x = unbatched ? input.unsqueeze(0) : input;
    let pads; // [before, after] per spatial dim
    if (typeof o.padding === 'string') {
      if (o.padding === 'valid') pads = [[0, 0], [0, 0], [0, 0]];
      else if (o.padding === 'same') {
        if (stride.some((v) => v !== 1)) throw bad("padding='same' is not supported for strided convolutions");
        pads = k.map((kk, i) => { const t = dilation[i] * (kk - 1); return [Math.floor(t / 2), t - Math.floor(t / 2)]; });
      } else throw bad(`Invalid padding string '${o.padding}', should be one of ['valid', 'same']`);
    } else {
      const p = list(o.padding, 3, 'padding', 0);
      if (p.some((v) => v < 0)) throw bad('negative padding is not supported');
      pads = p.map((v) => [v, v]);
    }
    const sp = x.shape.slice(2);
    const padded = sp.map((v, i) => v + pads[i][0] + pads[i][1]);
    if (padded.some((v, i) => v < dilation[i] * (k[i] - 1) + 1)) {
      throw bad(`Calculated padded input size per channel: (${padded.join(' x ')}). Kernel size: (${k.map((kk, i) => dilation[i] * (kk - 1) + 1).join(' x ')}). Kernel size can't be greater than actual input size`);
    }
    // H and W: symmetric padding goes to conv2d; an asymmetric ('same', even kernel) extra is padded here
    const extra = [pads[2][1] - pads[2][0], pads[1][1] - pads[1][0]];
    const xp = F.pad(x, [0, extra[0], 0, extra[1], pads[0][0], pads[0][1]]);
    const [n, c] = x.shape;
    const [cols, od] = unrollDepth(xp, groups, k[0], stride[0], dilation[0]);
    const oc = weight.shape[0];
    const w2 = weight.permute(0, 2, 1, 3, 4).reshape([oc, k[0] * (c / groups), k[1], k[2]]);
    const y = F.conv2d(cols, w2, o.bias, stride.slice(1), [pads[1][0], pads[2][0]], dilation.slice(1), groups);
    const out = y.reshape([n, od, oc, y.shape[2], y.shape[3]]).permute(0, 2, 1, 3, 4).contiguous();
    return unbatched ? out.squeeze(0) : out;
  };

  function convTransposeArgs(what, nd, args) {
    const o = parseArgs(`${what}()`, args, ['input', 'weight', 'bias', 'stride', 'padding', 'outputPadding', 'groups', 'dilation'],
      { bias: null, stride: 1, padding: 0, outputPadding: 0, groups: 1, dilation: 1 });
    tensorArg(o.input, what, 'input');
    tensorArg(o.weight, what, 'weight');
    checkConv(what, o.input, o.weight, o.bias, o.groups, true, nd);
    const r = {
      input: o.input, weight: o.weight, bias: o.bias, groups: o.groups,
      stride: list(o.stride, nd, 'stride', 1), padding: list(o.padding, nd, 'padding', 0),
      outputPadding: list(o.outputPadding, nd, 'output_padding', 0), dilation: list(o.dilation, nd, 'dilation', 1),
    };
    positive(r.stride, 'stride');
    positive(r.dilation, 'dilation');
    if (r.padding.some((v) => v < 0)) throw bad('negative padding is not supported');
    if (r.outputPadding.some((v) => v < 0)) throw bad('negative output_padding is not supported');
    if (r.outputPadding.some((v, i) => v >= r.stride[i] && v >= r.dilation[i])) {
      // PyTorch's message names every dim (a 1-D convolution is a 2-D one of height 1)
      const names = nd === 3 ? ['depth', 'height', 'width'] : ['height', 'width'];
      const pre = (a, one) => (nd === 1 ? [one, ...a] : a);
      const part = (what, a) => names.map((nm, i) => `${what}_${nm}: ${a[i]}`).join(' ');
      throw bad('output padding must be smaller than either stride or dilation, but got ' +
        `${part('output_padding', pre(r.outputPadding, 0))} ${part('stride', pre(r.stride, 1))} ${part('dilation', pre(r.dilation, 1))}`);
    }
    return r;
  }

  /** 1-D transposed convolution; weight (C_in, C_out / groups, k).
   * convTranspose1d(input, weight, bias?, stride=1, padding=0, outputPadding=0, groups=1, dilation=1). */
  F.convTranspose1d = function convTranspose1d(...args) {
    const a = convTransposeArgs('conv_transpose1d', 1, args);
    const x = a.input.unsqueeze(-2);
    const y = F.convTranspose2d(x, a.weight.unsqueeze(2), a.bias, [1, a.stride[0]], [0, a.padding[0]], [0, a.outputPadding[0]],
      a.groups, [1, a.dilation[0]]);
    return y.squeeze(-2);
  };

  /** 3-D transposed convolution; weight (C_in, C_out / groups, kD, kH, kW).
   * convTranspose3d(input, weight, bias?, stride=1, padding=0, outputPadding=0, groups=1, dilation=1). */
  F.convTranspose3d = function convTranspose3d(...args) {
    const a = convTransposeArgs('conv_transpose3d', 3, args);
    const unbatched = a.input.ndim === 4;
    const x = unbatched ? a.input.unsqueeze(0) : a.input;
    const [n, c, d, h, w] = x.shape;
    const { groups, stride, padding, dilation, outputPadding } = a;
    const [kD, kH, kW] = a.weight.shape.slice(2);
    const co = a.weight.shape[1];
    const od = (d - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kD - 1) + outputPadding[0] + 1;
    if (od <= 0) throw bad(`Given input size per channel: (${[d, h, w].join(' x ')}). Calculated output size per channel: (${od} x ...). Output size is too small`);
    // zeros between depth planes: (N, C, D, 1, H, W) padded to (N, C, D, s, H, W), trimmed
    const s = stride[0];
    let xz = x;
    if (s > 1) xz = F.pad(x.unsqueeze(3), [0, 0, 0, 0, 0, s - 1]).reshape([n, c, d * s, h, w]).narrow(2, 0, (d - 1) * s + 1);
    const edge = dilation[0] * (kD - 1) - padding[0];
    const xp = F.pad(xz, [0, 0, 0, 0, edge, edge + outputPadding[0]]);
    const [cols] = unrollDepth(xp, groups, kD, 1, dilation[0]);
    const w2 = a.weight.flip([2]).reshape([groups, c / groups, co, kD, kH, kW]).permute(0, 3, 1, 2, 4, 5)
      .reshape([groups * kD * (c / groups), co, kH, kW]);
    const y = F.convTranspose2d(cols, w2, a.bias, stride.slice(1), padding.slice(1), outputPadding.slice(1), groups, dilation.slice(1));
    const out = y.reshape([n, od, co * groups, y.shape[2], y.shape[3]]).permute(0, 2, 1, 3, 4).contiguous();
    return unbatched ? out.squeeze(0) : out;
  };

  function blockArgs(what, o) {
    return {
      k: list(o.kernelSize, 2, 'kernel_size'), d: list(o.dilation, 2, 'dilation', 1),
      p: list(o.padding, 2, 'padding', 0), s: list(o.stride, 2, 'stride', 1),
    };
  }
  function checkBlocks(what, a, sizes) {
    if (a.k.some((v) => v <= 0)) throw bad(`kernel size should be greater than zero, but got kernel_height: ${a.k[0]} kernel_width: ${a.k[1]}`);
    if (a.d.some((v) => v <= 0)) throw bad(`dilation should be greater than zero, but got dilation_height: ${a.d[0]} dilation_width: ${a.d[1]}`);
    if (a.s.some((v) => v <= 0)) throw bad(`stride should be greater than zero, but got stride_height: ${a.s[0]} stride_width: ${a.s[1]}`);
    if (a.p.some((v) => v < 0)) throw bad(`padding should be non-negative, but got pad_height: ${a.p[0]} pad_width: ${a.p[1]}`);
    const blocks = sizes.map((v, i) => Math.floor((v + 2 * a.p[i] - (a.d[i] * (a.k[i] - 1) + 1)) / a.s[i]) + 1);
    if (blocks.some((v) => v < 1)) {
      throw bad(`Given input with spatial size (${sizes.join(', ')}), kernel_size=(${a.k.join(', ')}), dilation=(${a.d.join(', ')}), padding=(${a.p.join(', ')}), ` +
        `calculated shape of the array of sliding blocks as (${blocks.join(', ')}), but its components must be at least one.`);
    }
    return blocks;
  }

  /** Extracts sliding local blocks: (N, C, H, W) -> (N, C * kH * kW, L).
   * unfold(input, kernelSize, dilation=1, padding=0, stride=1). */
  F.unfold = function unfold(...args) {
    const o = parseArgs('unfold()', args, ['input', 'kernelSize', 'dilation', 'padding', 'stride'], { dilation: 1, padding: 0, stride: 1 });
    const input = tensorArg(o.input, 'unfold', 'input');
    if (input.ndim < 3 && input.ndim > 0) { // PyTorch 1.13 reads dim 2 first
      throw makeError('KD_INDEX_OUT_OF_RANGE', `Dimension out of range (expected to be in range of [${-input.ndim}, ${input.ndim - 1}], but got 2)`);
    }
    if (input.ndim !== 3 && input.ndim !== 4) {
      throw bad(`Input Error: Only 3D or 4D input Tensors are supported (got ${input.ndim}D)`, 'KD_NOT_SUPPORTED');
    }
    const a = blockArgs('unfold', o);
    const x = input.ndim === 3 ? input.unsqueeze(0) : input;
    if (x.shape[1] === 0 || x.shape[2] === 0 || x.shape[3] === 0) {
      throw bad(`Expected non-empty 3D or 4D input tensor, but got input of size ${fmt(input.shape)}`, 'KD_SHAPE_MISMATCH');
    }
    const [oh, ow] = checkBlocks('unfold', a, x.shape.slice(2));
    const [n, c] = x.shape;
    const xp = F.pad(x, [a.p[1], a.p[1], a.p[0], a.p[0]]);
    const win = windows(windows(xp, 2, a.k[0], a.s[0], a.d[0]), 3, a.k[1], a.s[1], a.d[1]); // (N, C, OH, OW, kH, kW)
    const out = win.permute(0, 1, 4, 5, 2, 3).reshape([n, c * a.k[0] * a.k[1], oh * ow]);
    return input.ndim === 3 ? out.squeeze(0) : out;
  };

  /** Sums sliding local blocks into an image: (N, C * kH * kW, L) -> (N, C, H, W).
   * fold(input, outputSize, kernelSize, dilation=1, padding=0, stride=1). */
  F.fold = function fold(...args) {
    const o = parseArgs('fold()', args, ['input', 'outputSize', 'kernelSize', 'dilation', 'padding', 'stride'], { dilation: 1, padding: 0, stride: 1 });
    const input = tensorArg(o.input, 'fold', 'input');
    if (input.ndim !== 2 && input.ndim !== 3) {
      throw bad(`Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got ${input.ndim}D)`, 'KD_NOT_SUPPORTED');
    }
    const a = blockArgs('fold', o);
    const size = list(o.outputSize, 2, 'output_size');
    if (size.some((v) => v <= 0)) throw bad(`output_size should be greater than zero, but got output_height: ${size[0]} output_width: ${size[1]}`);
    const x = input.ndim === 2 ? input.unsqueeze(0) : input;
    const [n, ck, l] = x.shape;
    const kk = a.k[0] * a.k[1];
    if (ck === 0 || ck % kk !== 0) {
      throw bad(`Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=${ck} and kernel_size=(${a.k.join(', ')})`, 'KD_SHAPE_MISMATCH');
    }
    const [bh, bw] = checkBlocks('fold', a, size);
    if (l !== bh * bw) {
      throw bad(`Given output_size=(${size.join(', ')}), kernel_size=(${a.k.join(', ')}), dilation=(${a.d.join(', ')}), padding=(${a.p.join(', ')}), stride=(${a.s.join(', ')}), ` +
        `expected size of input's dimension 2 to match the calculated number of sliding blocks ${bh} * ${bw} = ${bh * bw}, but got input.size(2)=${l}.`, 'KD_SHAPE_MISMATCH');
    }
    const c = ck / kk;
    const hp = size[0] + 2 * a.p[0], wp = size[1] + 2 * a.p[1];
    // the padded image position of every (kh, kw, block) element
    const idx = new Array(kk * l);
    let q = 0;
    for (let i = 0; i < a.k[0]; i++) {
      for (let j = 0; j < a.k[1]; j++) {
        for (let bi = 0; bi < bh; bi++) {
          for (let bj = 0; bj < bw; bj++) idx[q++] = (bi * a.s[0] + i * a.d[0]) * wp + bj * a.s[1] + j * a.d[1];
        }
      }
    }
    const index = kd.tensor(idx, { dtype: 'int64', device: x.device });
    const img = kd.zeros([n, c, hp * wp], { dtype: x.dtype, device: x.device }).indexAdd(2, index, x.reshape([n, c, kk * l]));
    const out = img.view(n, c, hp, wp).narrow(2, a.p[0], size[0]).narrow(3, a.p[1], size[1]);
    return input.ndim === 2 ? out.squeeze(0) : out;
  };
};
