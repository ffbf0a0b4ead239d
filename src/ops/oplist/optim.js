// oplist/optim.js - fused optimizer updates for kd.optim (lib/optim/): one op per optimizer
// family that reads a parameter's gradient and state and writes the parameter and state in
// place in ONE pass over memory (src/cpu/optim.c; cuda/ops_optim.cu), instead of a chain of small ops. Each has
// a single-tensor form (`adamStep_`) and a foreach form over tensor lists (`foreachAdamStep_`)
// that updates a whole parameter group in one native call. Not differentiable: kd.optim calls
// them under kd.noGrad. The single forms return the parameter; the foreach forms return an
// empty list (PyTorch's _foreach_*_ return None). All arguments are positional so that the
// generated JS takes its fast path. Part of the op list (see ./index.js).
'use strict';

const INTERNAL = { variants: ['function'], ns: ['_internal'], kind: 'pointwise', cpu: 'kd_cpu_optim', flags: ['nondiff'] };

const SGD = 'float lr=0.001, float momentum=0, float dampening=0, bool nesterov=false, float weightDecay=0, bool maximize=false, bool firstStep=false';
const ADAM = 'float lr=0.001, float beta1=0.9, float beta2=0.999, float eps=1e-8, float weightDecay=0, float step=1, bool maximize=false';
const RMSPROP = 'float lr=0.01, float alpha=0.99, float eps=1e-8, float weightDecay=0, float momentum=0, bool maximize=false';
const ADAGRAD = 'float lr=0.01, float lrDecay=0, float weightDecay=0, float eps=1e-10, float step=1, bool maximize=false';
const ADADELTA = 'float lr=1, float rho=0.9, float eps=1e-6, float weightDecay=0, bool maximize=false';
const RADAM = 'float lr=0.001, float beta1=0.9, float beta2=0.999, float eps=1e-8, float weightDecay=0, float step=1';

module.exports = [
  { name: 'sgdStep_', args: `Tensor param, Tensor grad, Tensor? momentumBuffer, ${SGD}`, returns: 'Tensor',
    code: 'KD_OPTIM_SGD', ...INTERNAL,
    doc: 'SGD update of param (momentum, dampening, nesterov, weightDecay, maximize); firstStep initialises momentumBuffer to the gradient.' },
  { name: 'foreachSgdStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] momentumBuffers, ${SGD}`, returns: 'Tensor[]',
    code: 'KD_OPTIM_SGD', ...INTERNAL, doc: 'sgdStep_ over lists of tensors (momentumBuffers empty when momentum is 0).' },
  { name: 'adamStep_', args: `Tensor param, Tensor grad, Tensor expAvg, Tensor expAvgSq, Tensor? maxExpAvgSq, ${ADAM}`,
    returns: 'Tensor', code: 'KD_OPTIM_ADAM', ...INTERNAL,
    doc: 'Adam update (step is the new step count; maxExpAvgSq given: amsgrad).' },
  { name: 'foreachAdamStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] expAvgs, Tensor[] expAvgSqs, Tensor[] maxExpAvgSqs, ${ADAM}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_ADAM', ...INTERNAL, doc: 'adamStep_ over lists of tensors (maxExpAvgSqs empty without amsgrad).' },
  { name: 'adamwStep_', args: `Tensor param, Tensor grad, Tensor expAvg, Tensor expAvgSq, Tensor? maxExpAvgSq, ${ADAM}`,
    returns: 'Tensor', code: 'KD_OPTIM_ADAMW', ...INTERNAL,
    doc: 'AdamW update: adamStep_ with decoupled weight decay (param *= 1 - lr * weightDecay first).' },
  { name: 'foreachAdamwStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] expAvgs, Tensor[] expAvgSqs, Tensor[] maxExpAvgSqs, ${ADAM}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_ADAMW', ...INTERNAL, doc: 'adamwStep_ over lists of tensors (maxExpAvgSqs empty without amsgrad).' },
  { name: 'rmspropStep_', args: `Tensor param, Tensor grad, Tensor squareAvg, Tensor? gradAvg, Tensor? momentumBuffer, ${RMSPROP}`,
    returns: 'Tensor', code: 'KD_OPTIM_RMSPROP', ...INTERNAL,
    doc: 'RMSprop update (gradAvg given: centered; momentumBuffer given when momentum > 0).' },
  { name: 'foreachRmspropStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] squareAvgs, Tensor[] gradAvgs, Tensor[] momentumBuffers, ${RMSPROP}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_RMSPROP', ...INTERNAL, doc: 'rmspropStep_ over lists of tensors (optional lists empty).' },
  { name: 'adagradStep_', args: `Tensor param, Tensor grad, Tensor stateSum, ${ADAGRAD}`, returns: 'Tensor',
    code: 'KD_OPTIM_ADAGRAD', ...INTERNAL, doc: 'Adagrad update (step is the new step count).' },
  { name: 'foreachAdagradStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] stateSums, ${ADAGRAD}`, returns: 'Tensor[]',
    code: 'KD_OPTIM_ADAGRAD', ...INTERNAL, doc: 'adagradStep_ over lists of tensors.' },
  { name: 'adadeltaStep_', args: `Tensor param, Tensor grad, Tensor squareAvg, Tensor accDelta, ${ADADELTA}`, returns: 'Tensor',
    code: 'KD_OPTIM_ADADELTA', ...INTERNAL, doc: 'Adadelta update (rho, eps, weightDecay, maximize).' },
  { name: 'foreachAdadeltaStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] squareAvgs, Tensor[] accDeltas, ${ADADELTA}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_ADADELTA', ...INTERNAL, doc: 'adadeltaStep_ over lists of tensors.' },
  { name: 'radamStep_', args: `Tensor param, Tensor grad, Tensor expAvg, Tensor expAvgSq, ${RADAM}`, returns: 'Tensor',
    code: 'KD_OPTIM_RADAM', ...INTERNAL,
    doc: 'RAdam update (step is the new step count; rectified once the variance is tractable, plain momentum before).' },
  { name: 'foreachRadamStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] expAvgs, Tensor[] expAvgSqs, ${RADAM}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_RADAM', ...INTERNAL, doc: 'radamStep_ over lists of tensors.' },
];
