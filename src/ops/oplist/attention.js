// oplist/attention.js - scaled dot-product attention: kd.nn.functional.scaledDotProductAttention (a
// composite, src/ops/nn_composites.c, that runs the fused ops below or, for dropout and a float
// mask that requires grad, the math composition) and the fused ops (src/cpu/attention.c,
// cuda/ops_attention.cu; Note [Fused attention]). Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'] };
const GRAD = 'sdpaFlashGrad(grad, query, key, value, attnMask, result, result1, isCausal, scale)';
const GRAD_ARGS = 'Tensor gradOutput, Tensor query, Tensor key, Tensor value, Tensor? attnMask, Tensor output, ' +
  'Tensor logsumexp, bool isCausal, float scale';
const GRADS = '(Tensor gradQuery, Tensor gradKey, Tensor gradValue)';
// d(scores) for a float mask (the public composite runs the math composition then; this is for
// direct calls): P * (dO V^T - rowsum(dO * O)), P recomputed from the log-sum-exp.
const MASK_GRAD = 'exp(query.matmul(key.transpose(-2, -1)) * scale + attnMask - result1.unsqueeze(-1)) * ' +
  '(grad.matmul(value.transpose(-2, -1)) - (grad * result).sum(-1, true))';

module.exports = [
  { name: 'scaledDotProductAttention',
    args: 'Tensor query, Tensor key, Tensor value, Tensor? attnMask, float dropoutP=0.0, bool isCausal=false, *, float? scale',
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite',
    composite: 'kd_composite_sdpa',
    doc: 'softmax(query @ key^T * scale + mask) @ value (bool masks keep where true; float masks add), with optional causal mask and dropout; fused (the scores are never materialised) unless dropoutP > 0 or a float mask requires grad.' },
  { name: 'sdpaFlash', args: 'Tensor query, Tensor key, Tensor value, Tensor? attnMask, bool isCausal, float scale',
    returns: '(Tensor output, Tensor logsumexp)', ...INTERNAL, kind: 'linalg', cpu: 'kd_cpu_sdpa_flash',
    backward: { query: `${GRAD}[0]`, key: `${GRAD}[1]`, value: `${GRAD}[2]`, attnMask: MASK_GRAD },
    doc: 'Fused attention (online softmax over key blocks): the output and the log-sum-exp of each query row\'s scaled, masked scores; float32/float64, batch dims broadcast.' },
  { name: 'sdpaFlashGrad', args: GRAD_ARGS, returns: GRADS, ...INTERNAL, kind: 'composite',
    composite: 'kd_composite_sdpa_flash_grad',
    doc: 'Gradient of sdpaFlash for query, key and value: the fused kernel (sdpaFlashBackward), or the math composition when a graph of the gradient is recorded (double backward).' },
  { name: 'sdpaFlashBackward', args: GRAD_ARGS, returns: GRADS, ...INTERNAL, kind: 'linalg',
    cpu: 'kd_cpu_sdpa_flash_backward',
    doc: 'Fused gradient of sdpaFlash for query, key and value, recomputing the attention weights from the log-sum-exp.' },
];
