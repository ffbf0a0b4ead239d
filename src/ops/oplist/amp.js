// oplist/amp.js - the two fused kernels of gradient scaling (kd.amp.GradScaler, lib/amp.js),
// PyTorch's _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_: one native call
// unscales every gradient of a device in place and records whether any was inf/NaN, one updates
// the scale and its growth tracker on the device (no host sync). CPU kernel src/cpu/amp.c, CUDA
// through the device-op hook (cuda/ops_amp.cu). Internal, positional, not differentiable; they
// return an empty list / the scale as PyTorch's do. Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'], kind: 'pointwise', cpu: 'kd_cpu_amp', flags: ['nondiff'] };

module.exports = [
  { name: 'ampForeachNonFiniteCheckAndUnscale_', args: 'Tensor[] grads, Tensor foundInf, Tensor invScale',
    returns: 'Tensor[]', code: 'KD_AMP_UNSCALE', ...INTERNAL,
    doc: 'Multiplies every gradient by invScale (1-element float32) in place and sets foundInf (1-element float32) to 1 when any value was inf or NaN.' },
  { name: 'ampUpdateScale_', args: 'Tensor self, Tensor growthTracker, Tensor foundInf, float scaleGrowthFactor, float scaleBackoffFactor, int growthInterval',
    returns: 'Tensor', code: 'KD_AMP_UPDATE_SCALE', ...INTERNAL,
    doc: 'GradScaler\'s scale update in place: backoff and reset the int32 growthTracker when foundInf, else count and grow every growthInterval steps.' },
];
