// oplist/nn.js - neural-network ops: softmax/logSoftmax, layer/group/batch normalisation,
// embedding, dropout and losses (attention: ./attention.js), with the internal ops their
// backward formulas call (kd._internal). Part of the op list (see ./index.js).
// Kernels: src/cpu/softmax.c, norm.c, loss.c, embedding.c; composites: src/ops/nn_composites.c.
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'] };
// derivatives.yaml: the scale of a pointwise loss's gradient for the reduction
const RED = "(reduction == 'mean' ? grad / self.numel : grad)";
// Double backward of pointwiseLossBackward (derivatives.yaml's *_double_backward): the incoming
// grad times the reduction-scaled gradOutput times the weight, times a second derivative of the
// loss l(x = input, t = target): l_xx, l_xt or l_tt by kind (2 smoothL1, 3 BCE, 4 BCE with
// logits; l1 has none). The gradient of an op computing l_x is l_xx (input) and l_xt (target);
// of one computing l_t (wrtTarget) l_xt and l_tt.
const PLB_SCALE = "grad * (reduction == 'mean' ? gradOutput / grad.numel : gradOutput) * (weight == null ? 1 : weight)";
const BCE_XX1M = '(1 - input + 1e-12)'; // PyTorch's eps in binary_cross_entropy_double_backward
const PLB_XX = "(kind == 2 ? where((input - target).abs() < beta, 1 / beta, 0) : " +
  `kind == 3 ? (input * input - input * target * 2 + target) / ((input + 1e-12).pow(2) * ${BCE_XX1M}.pow(2)) : ` +
  '(posWeight == null ? 1 : (posWeight - 1) * target + 1) * input.sigmoid() * (1 - input.sigmoid()))';
const PLB_XT = "(kind == 2 ? where((input - target).abs() < beta, -1 / beta, 0) : " +
  `kind == 3 ? -1 / ((input + 1e-12) * ${BCE_XX1M}) : ` +
  '(posWeight == null ? zerosLike(input) - 1 : (1 - posWeight) * (1 - input.sigmoid()) - 1))';
const PLB_TT = "(kind == 2 ? where((input - target).abs() < beta, 1 / beta, 0) : zerosLike(grad))";

module.exports = [
  // ---- softmax family ----
  { name: 'softmax', args: 'Tensor self, int dim, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], ns: ['', 'nn.functional'], kind: 'reduction',
    code: 'KD_SOFTMAX_SOFTMAX', cpu: 'kd_cpu_softmax',
    backward: { self: 'result * (grad - (grad * result).sum(dim, true))' },
    doc: 'exp(self) / sum(exp(self)) along dim, computed stably (in dtype when given).' },
  { name: 'logSoftmax', args: 'Tensor self, int dim, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], ns: ['', 'nn.functional'], kind: 'reduction',
    code: 'KD_SOFTMAX_LOG', cpu: 'kd_cpu_softmax',
    backward: { self: 'grad - exp(result) * grad.sum(dim, true)' },
    doc: 'log(softmax(self)) along dim, computed stably (in dtype when given).' },

  // ---- normalisation ----
  { name: 'nativeLayerNorm', args: 'Tensor input, int[] normalizedShape, Tensor? weight, Tensor? bias, float eps',
    returns: '(Tensor output, Tensor mean, Tensor rstd)', ...INTERNAL, kind: 'reduction', cpu: 'kd_cpu_layer_norm',
    backward: {
      input: 'layerNormBackward(grad, input, normalizedShape, result1, result2, weight)',
      // xhat recomputed (not (input - result1) * result2: mean and rstd carry no gradient of their
      // own, so double backward through them would miss their dependence on input)
      weight: 'grad * nativeLayerNorm(input, normalizedShape, null, null, eps)',
      bias: 'grad',
    },
    doc: 'Layer normalisation over the trailing normalizedShape dims; also returns the mean and 1/std (keepdim shape, float32 for half inputs).' },
  { name: 'layerNormBackward', args: 'Tensor gradOutput, Tensor input, int[] normalizedShape, Tensor mean, Tensor rstd, Tensor? weight',
    returns: 'Tensor', ...INTERNAL, kind: 'reduction', cpu: 'kd_cpu_layer_norm_backward',
    // double backward (derivatives.yaml's layer_norm_double_backward): mean and rstd are the
    // functions of input they are, so the input formula is the total derivative
    backward: {
      gradOutput: 'weight == null ? layerNormBackward(grad, input, normalizedShape, mean, rstd, null) : ' +
        'layerNormBackward(grad, input, normalizedShape, mean, rstd, null) * weight',
      input: 'layerNormDoubleBackward(grad, weight == null ? gradOutput : gradOutput * weight, input, normalizedShape, mean, rstd)',
      mean: 'zeros(mean.shape, dtype=grad.dtype)',
      rstd: 'zeros(rstd.shape, dtype=grad.dtype)',
      weight: 'gradOutput * layerNormBackward(grad, input, normalizedShape, mean, rstd, null)',
    },
    doc: 'Gradient of nativeLayerNorm with respect to its input.' },
  { name: 'layerNorm', args: 'Tensor input, int[] normalizedShape, Tensor? weight, Tensor? bias, float eps=1e-5',
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite',
    composite: 'kd_composite_layer_norm', doc: 'Layer normalisation over the trailing normalizedShape dims, then weight and bias.' },
  { name: 'groupNorm', args: 'Tensor input, int numGroups, Tensor? weight, Tensor? bias, float eps=1e-5',
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite',
    composite: 'kd_composite_group_norm', doc: 'Group normalisation of (N, C, *) input over numGroups groups of channels, then per-channel weight and bias.' },
  { name: 'batchNorm',
    args: 'Tensor input, Tensor? runningMean, Tensor? runningVar, Tensor? weight, Tensor? bias, bool training=false, float momentum=0.1, float eps=1e-5',
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite',
    composite: 'kd_composite_batch_norm',
    doc: 'Batch normalisation over every dim but 1; training uses batch statistics and updates the running ones in place.' },

  // ---- embedding ----
  { name: 'embedding', args: 'Tensor input, Tensor weight, int? paddingIdx', returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'pointwise', cpu: 'kd_cpu_embedding',
    backward: { weight: 'embeddingBackward(grad, input, weight.shape, paddingIdx)' },
    doc: 'Rows of weight picked by the integer indices in input (output shape input.shape + [dim]).' },
  { name: 'embeddingBackward', args: 'Tensor gradOutput, Tensor input, int[] weightShape, int? paddingIdx', returns: 'Tensor',
    ...INTERNAL, kind: 'pointwise', cpu: 'kd_cpu_embedding_backward',
    backward: { gradOutput: 'embedding(input, grad)' },
    doc: 'Gradient of embedding for its weight: grad rows added into the rows their indices name (none for paddingIdx).' },

  // ---- dropout ----
  { name: 'nativeDropout', args: 'Tensor input, float p, bool train', returns: '(Tensor output, Tensor mask)',
    ...INTERNAL, kind: 'pointwise', cpu: 'kd_cpu_native_dropout',
    backward: { input: 'grad * result1 * (p == 1 ? 0 : 1 / (1 - p))' },
    doc: 'Zeroes elements with probability p (Philox, seeded by manualSeed) and scales the rest by 1/(1-p); returns the bool keep mask too.' },
  { name: 'dropout', args: 'Tensor input, float p=0.5, bool training=true', returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'composite', composite: 'kd_composite_dropout',
    doc: 'During training, zeroes elements with probability p and scales the rest by 1/(1-p); the input itself otherwise.' },

  // ---- losses ----
  { name: 'nllLoss', args: "Tensor input, Tensor target, Tensor? weight, int ignoreIndex=-100, str reduction='mean'",
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'reduction', cpu: 'kd_cpu_nll_loss',
    backward: { input: 'nllLossBackward(grad, input, target, weight, ignoreIndex, reduction)' },
    doc: 'Negative log-likelihood of class-index targets for (C), (N, C) or (N, C, d1, ...) log-probabilities.' },
  { name: 'nllLossBackward', args: 'Tensor gradOutput, Tensor input, Tensor target, Tensor? weight, int ignoreIndex, str reduction',
    returns: 'Tensor', ...INTERNAL, kind: 'reduction', cpu: 'kd_cpu_nll_loss_backward',
    backward: { gradOutput: 'nllLoss(grad, target, weight, ignoreIndex, reduction)', input: 'zerosLike(grad)' },
    doc: 'Gradient of nllLoss with respect to its input.' },
  { name: 'crossEntropy',
    args: "Tensor input, Tensor target, Tensor? weight, int ignoreIndex=-100, str reduction='mean', float labelSmoothing=0.0",
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite', composite: 'kd_composite_cross_entropy',
    doc: 'logSoftmax over the class dim then nllLoss (class-index targets) or -sum(target * logp) (class-probability targets), with label smoothing.' },
  { name: 'mseLoss', args: "Tensor input, Tensor target, str reduction='mean'", returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'reduction', code: 'KD_LOSS_MSE', cpu: 'kd_cpu_pointwise_loss',
    backward: { input: `${RED.replace('self', 'input')} * 2 * (input - target)`, target: `${RED.replace('self', 'input')} * 2 * (target - input)` },
    doc: 'Mean (or summed) squared error.' },
  { name: 'l1Loss', args: "Tensor input, Tensor target, str reduction='mean'", returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'reduction', code: 'KD_LOSS_L1', cpu: 'kd_cpu_pointwise_loss',
    backward: {
      input: 'pointwiseLossBackward(grad, input, target, null, null, reduction, 1.0, 1, false)',
      target: 'pointwiseLossBackward(grad, input, target, null, null, reduction, 1.0, 1, true)',
    },
    doc: 'Mean (or summed) absolute error.' },
  { name: 'smoothL1Loss', args: "Tensor input, Tensor target, str reduction='mean', float beta=1.0", returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'reduction', code: 'KD_LOSS_SMOOTH_L1', cpu: 'kd_cpu_pointwise_loss',
    backward: {
      input: 'pointwiseLossBackward(grad, input, target, null, null, reduction, beta, 2, false)',
      target: 'pointwiseLossBackward(grad, input, target, null, null, reduction, beta, 2, true)',
    },
    doc: 'Squared error below beta (halved, over beta), absolute error minus beta/2 above.' },
  { name: 'binaryCrossEntropy', args: "Tensor input, Tensor target, Tensor? weight, str reduction='mean'", returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'reduction', code: 'KD_LOSS_BCE', cpu: 'kd_cpu_pointwise_loss',
    backward: {
      input: 'pointwiseLossBackward(grad, input, target, weight, null, reduction, 1.0, 3, false)',
      target: 'pointwiseLossBackward(grad, input, target, weight, null, reduction, 1.0, 3, true)',
    },
    doc: '-(target * log(input) + (1 - target) * log(1 - input)), logs clamped at -100, times weight.' },
  { name: 'binaryCrossEntropyWithLogits',
    args: "Tensor input, Tensor target, Tensor? weight, str reduction='mean', Tensor? posWeight", returns: 'Tensor',
    variants: ['function'], ns: ['nn.functional'], kind: 'reduction', code: 'KD_LOSS_BCE_LOGITS', cpu: 'kd_cpu_pointwise_loss',
    backward: {
      input: 'pointwiseLossBackward(grad, input, target, weight, posWeight, reduction, 1.0, 4, false)',
      target: 'pointwiseLossBackward(grad, input, target, weight, posWeight, reduction, 1.0, 4, true)',
    },
    doc: 'binaryCrossEntropy of sigmoid(input), computed stably from the logits; posWeight weighs the positive term.' },
  { name: 'pointwiseLossBackward',
    args: 'Tensor gradOutput, Tensor input, Tensor target, Tensor? weight, Tensor? posWeight, str reduction, float beta, int kind, bool wrtTarget',
    returns: 'Tensor', ...INTERNAL, kind: 'pointwise', cpu: 'kd_cpu_pointwise_loss_backward',
    backward: {
      gradOutput: 'grad * pointwiseLossBackward(onesLike(gradOutput), input, target, weight, posWeight, reduction, beta, kind, wrtTarget)',
      input: `kind == 1 ? zerosLike(grad) : ${PLB_SCALE} * (wrtTarget ? ${PLB_XT} : ${PLB_XX})`,
      target: `kind == 1 ? zerosLike(grad) : ${PLB_SCALE} * (wrtTarget ? ${PLB_TT} : ${PLB_XT})`,
    },
    doc: 'Gradient of l1Loss (kind 1), smoothL1Loss (2), binaryCrossEntropy (3), binaryCrossEntropyWithLogits (4) for input (or target when wrtTarget), shaped like the broadcast of input and target.' },
  // connectionist temporal classification: F.ctcLoss (lib/nn/ctc.js) checks and reduces around these
  { name: 'ctcLossForward',
    args: 'Tensor logProbs, Tensor targets, int[] inputLengths, int[] targetLengths, int blank=0, bool zeroInfinity=false',
    returns: '(Tensor negLogLikelihood, Tensor logAlpha)', ...INTERNAL, kind: 'reduction', cpu: 'kd_cpu_ctc_loss',
    autocast: { cpu: 'fp32' }, // PyTorch's ctc_loss policy (autocast_policy.js names it ctcLoss)
    backward: { logProbs: 'ctcLossBackward(grad, logProbs, targets, inputLengths, targetLengths, result, result1, blank, zeroInfinity)' },
    doc: "PyTorch's _ctc_loss: the negative log-likelihood of each target under logProbs (T, N, C), targets (N, S) padded or 1-D concatenated, and the forward variables logAlpha (N, T, 2S+1)." },
  { name: 'ctcLossBackward',
    args: 'Tensor gradOutput, Tensor logProbs, Tensor targets, int[] inputLengths, int[] targetLengths, Tensor negLogLikelihood, Tensor logAlpha, int blank, bool zeroInfinity',
    returns: 'Tensor', ...INTERNAL, kind: 'reduction', cpu: 'kd_cpu_ctc_loss_backward',
    doc: "PyTorch's _ctc_loss_backward: (exp(logProbs) - exp(logAlpha + logBeta + nll - logProbs) summed over each class's states) * gradOutput; zero past each input length, and for an infinite loss when zeroInfinity." },
];
