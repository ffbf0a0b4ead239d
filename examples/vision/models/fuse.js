// fuse.js - fuseConvBn(model): folds every eval-mode BatchNorm2d that directly follows a Conv2d
// into that convolution, for inference. For the pair (conv W, b; BN gamma, beta, mean, var, eps)
//   s = gamma / sqrt(var + eps),  W' = W * s (per output channel),  b' = beta + (b - mean) * s
// and the BatchNorm2d is replaced by nn.Identity, so a forward does one pass less over each
// activation (eval-mode BatchNorm costs four elementwise passes). Pairs are found (a) in
// nn.Sequential containers, a Conv2d child followed by a BatchNorm2d child, and (b) in any module,
// children named convN and bnN (torchvision's ResNet blocks and stem).
// For inference only, after loadStateDict: the model's state dict is no longer torchvision's (BN
// entries gone, conv biases added), and training it would not train BatchNorm. The result differs
// from the unfused model by float32 rounding only (test/vision_models.test.js checks it).
'use strict';

module.exports = function makeFuse(kd) {
  const { nn } = kd;

  /** Folds bn into conv in place (conv gains a bias when it had none), with kindling's own
   * folding (kd.nn.utils.fusion.fuseConvBnWeights, PyTorch's fuse_conv_bn_weights). */
  function foldInto(conv, bn) {
    if (!bn.runningMean || !bn.runningVar) throw new RangeError('fuseConvBn: a BatchNorm2d without running statistics cannot be folded');
    const old = [conv.weight, conv.bias].filter((t) => t);
    const [w, b] = kd.tidy(() => nn.utils.fusion.fuseConvBnWeights(conv.weight, conv.bias, bn.runningMean, bn.runningVar, bn.eps,
      bn.weight, bn.bias));
    conv.weight = w;
    conv.bias = b;
    kd.dispose(old);
  }

  const isPair = (a, b) => a instanceof nn.Conv2d && b instanceof nn.BatchNorm2d && !a.transposed && a.outChannels === b.numFeatures;

  /** Folds every Conv2d -> BatchNorm2d pair of `model` (see the top of this file); returns model. */
  function fuseConvBn(model) {
    if (model.training) throw new RangeError('fuseConvBn: call model.eval() first (folding uses the running statistics)');
    const dropped = [];
    for (const m of model.modules()) {
      const names = m.namedChildren().map(([name]) => name);
      if (m instanceof nn.Sequential) {
        for (let i = 0; i + 1 < names.length; i++) {
          const [a, b] = [m[names[i]], m[names[i + 1]]];
          if (isPair(a, b)) { foldInto(a, b); dropped.push(b); m[names[i + 1]] = new nn.Identity(); }
        }
      }
      for (const name of names) {
        const k = /^conv(\d+)$/.exec(name);
        const bnName = k && `bn${k[1]}`;
        if (k && isPair(m[name], m[bnName])) { foldInto(m[name], m[bnName]); dropped.push(m[bnName]); m[bnName] = new nn.Identity(); }
      }
    }
    kd.dispose(dropped.flatMap((bn) => [...bn.parameters(), ...bn.buffers()]));
    return model;
  }

  return { fuseConvBn };
};
