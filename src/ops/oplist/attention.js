// oplist/attention.js - scaled dot-product attention: kd.nn.functional.scaledDotProductAttention (a
// composite, src/ops/nn_composites.c, that runs the fused ops below or, for a float mask that
// requires grad, the math composition) and the fused ops (src/cpu/attention.c,
// cuda/ops_attention.cu; Note [Fused attention]). Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'] };
const GRAD = (maskGrad) => `sdpaFlashGrad(grad, query, key, value, attnMask, result, result1, result2, dropoutP, isCausal, scale, ${maskGrad})`;
const GRAD_ARGS = 'Tensor gradOutput, Tensor query, Tensor key, Tensor value, Tensor? attnMask, Tensor output, ' +
  'Tensor logsumexp, Tensor philoxState, float dropoutP, bool isCausal, float scale';
const GRADS = '(Tensor gradQuery, Tensor gradKey, Tensor gradValue)';

module.exports = [
  { name: 'scaledDotProductAttention',
    args: 'Tensor query, Tensor key, Tensor value, Tensor? attnMask, float dropoutP=0.0, bool isCausal=false, *, float? scale',
    returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'composite',
    composite: 'kd_composite_sdpa',
    doc: 'softmax(query @ key^T * scale + mask) @ value (bool masks keep where true; float masks add), with optional causal mask and dropout; fused (the scores are never materialised) unless a float mask requires grad.' },
  { name: 'sdpaFlash',
    args: 'Tensor query, Tensor key, Tensor value, Tensor? attnMask, float dropoutP, bool isCausal, float scale',
    returns: '(Tensor output, Tensor logsumexp, Tensor philoxState)', ...INTERNAL, kind: 'linalg', cpu: 'kd_cpu_sdpa_flash',
    backward: { query: `${GRAD(false)}[0]`, key: `${GRAD(false)}[1]`, value: `${GRAD(false)}[2]`, attnMask: `${GRAD(true)}[3]` },
    doc: 'Fused attention (online softmax over key blocks, dropout of the weights): the output, the log-sum-exp of each query row\'s scaled, masked scores and the dropout\'s (seed, offset); float32/float64, batch dims broadcast.' },
  { name: 'sdpaFlashGrad', args: `${GRAD_ARGS}, bool maskGrad`, returns: '(Tensor gradQuery, Tensor gradKey, Tensor gradValue, Tensor gradAttnMask)',
    ...INTERNAL, kind: 'composite', composite: 'kd_composite_sdpa_flash_grad', flags: ['cross_device'],
    doc: 'Gradient of sdpaFlash: the fused kernel (sdpaFlashBackward), or the math composition (the dropout redrawn from philoxState) when a graph of the gradient is recorded (double backward) or maskGrad asks for the gradient of a float mask (output 3).' },
  { name: 'sdpaFlashBackward', args: GRAD_ARGS, returns: GRADS, ...INTERNAL, kind: 'linalg',
    cpu: 'kd_cpu_sdpa_flash_backward', flags: ['cross_device'], // philoxState stays on the CPU
    doc: 'Fused gradient of sdpaFlash for query, key and value, recomputing the attention weights from the log-sum-exp.' },
];
