// fusion.js - kd.nn.utils.fusion (torch.nn.utils.fusion): folding an eval-mode batch norm into
// the convolution or linear layer before it, for inference. fuseConvBnEval(conv, bn) returns a
// copy of conv whose weight and bias include bn's affine transform and running statistics.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installFusion(kd, nn, { Parameter, deepCopy }) {
  const orZeros = (t, like) => (t === null || t === undefined ? kd.zerosLike(like) : t);

  /** [weight, bias] Parameters of a convolution with the batch norm folded in. */
  function fuseConvBnWeights(convW, convB, bnRm, bnRv, bnEps, bnW, bnB, transpose = false) {
    return kd.noGrad(() => {
      const b = orZeros(convB, bnRm);
      const w = bnW === null || bnW === undefined ? kd.onesLike(bnRm) : bnW;
      const bias = orZeros(bnB, bnRm);
      const rsqrt = bnRv.add(bnEps).rsqrt();
      const rest = new Array(convW.ndim - 2).fill(1);
      const shape = transpose ? [1, -1, ...rest] : [-1, 1, ...rest];
      const fusedW = convW.mul(w.mul(rsqrt).reshape(shape));
      const fusedB = b.sub(bnRm).mul(rsqrt).mul(w).add(bias);
      return [new Parameter(fusedW), new Parameter(fusedB)];
    });
  }
  /** [weight, bias] Parameters of a linear layer with the batch norm folded in. */
  function fuseLinearBnWeights(linearW, linearB, bnRm, bnRv, bnEps, bnW, bnB) {
    return kd.noGrad(() => {
      const b = orZeros(linearB, bnRm);
      const scale = bnW.mul(bnRv.add(bnEps).rsqrt());
      return [new Parameter(linearW.mul(scale.unsqueeze(-1))), new Parameter(b.sub(bnRm).mul(scale).add(bnB))];
    });
  }

  function checkEval(a, b) {
    if (a.training || b.training) throw new KindlingError('Fusion only for eval!', 'KD_INVALID_ARGUMENT');
  }
  /** A copy of the eval-mode conv with the eval-mode bn folded in (transpose for ConvTranspose). */
  function fuseConvBnEval(conv, bn, transpose = false) {
    checkEval(conv, bn);
    const fused = deepCopy(conv);
    [fused.weight, fused.bias] = fuseConvBnWeights(fused.weight, fused.bias, bn.runningMean, bn.runningVar, bn.eps, bn.weight, bn.bias, transpose);
    return fused;
  }
  /** A copy of the eval-mode linear layer with the eval-mode bn folded in. */
  function fuseLinearBnEval(linear, bn) {
    checkEval(linear, bn);
    const fused = deepCopy(linear);
    [fused.weight, fused.bias] = fuseLinearBnWeights(fused.weight, fused.bias, bn.runningMean, bn.runningVar, bn.eps, bn.weight, bn.bias);
    return fused;
  }

  nn.utils.fusion = { fuseConvBnEval, fuseConvBnWeights, fuseLinearBnEval, fuseLinearBnWeights };
  Object.assign(nn.utils, nn.utils.fusion);
};
