// conv_tbc.js - kd.nn.functional.convTbc (torch.conv_tbc): a 1-D convolution over time-major input
// [T, B, C_in] with weight [K, C_in, C_out] and bias [C_out], padded by `pad` steps of zeros at
// both ends of time (a negative pad trims), giving [T + 2 pad - K + 1, B, C_out]. Composed of ops:
// the K-step windows of the padded input (unfold along time) contracted with the weight in one
// einsum, so autograd and every device come with it.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installConvTbc(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const fail = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');

  /** convTbc(input [T, B, Cin], weight [K, Cin, Cout], bias [Cout], pad=0) -> [T + 2 pad - K + 1, B, Cout]. */
  F.convTbc = function convTbc(...args) {
    const { input, weight, bias, pad } = parseArgs('convTbc()', args, ['input', 'weight', 'bias', 'pad'], { pad: 0 });
    for (const [k, t] of [['input', input], ['weight', weight], ['bias', bias]]) {
      if (!(t instanceof kd.Tensor)) throw typeError(`conv_tbc(): argument '${k}' must be Tensor, not ${t === null ? 'null' : typeof t}`);
    }
    if (!Number.isInteger(pad)) throw typeError(`conv_tbc(): argument 'pad' must be int, not ${typeof pad}`);
    if (input.ndim !== 3) throw fail('Input must have 3 dims: time, batch, in_channel');
    if (weight.ndim !== 3) throw fail('Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.');
    if (bias.ndim !== 1) throw fail('Bias must be 1-D');
    const [T, B, Cin] = input.shape;
    const [K, wIn, Cout] = weight.shape;
    if (Cin !== wIn) throw fail('Input dim 2 (input channels) is not == dim 1 in the weight tensor');
    if (bias.shape[0] !== Cout) throw fail('Bias size must equal dim 2 in the weight tensor (output channels).');
    for (const t of [weight, bias]) {
      if (t.dtype !== input.dtype) throw new KindlingError(`conv_tbc(): expected ${input.dtype} weight and bias, got ${t.dtype}`, 'KD_DTYPE_MISMATCH');
    }
    const Tout = T + 2 * pad - K + 1;
    if (Tout < 0) throw new KindlingError(`Trying to create tensor with negative dimension ${Tout}: [${Tout}, ${B}, ${Cout}]`, 'KD_INVALID_ARGUMENT');
    if (K === 0 || Tout === 0) return bias.expand([Tout, B, Cout]).clone(); // no window: the bias alone
    let x = input;
    if (pad > 0) {
      const z = kd.zeros([pad, B, Cin], { dtype: input.dtype, device: input.device });
      x = kd.cat([z, x, z]);
    } else if (pad < 0) {
      x = x.narrow(0, -pad, T + 2 * pad);
    }
    // windows [Tout, B, Cin, K]
    const win = x.unfold(0, K, 1);
    return kd.einsum('tbik,kio->tbo', [win, weight]).add(bias);
  };
};
