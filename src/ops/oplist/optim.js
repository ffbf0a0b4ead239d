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
const ADAMAX = 'float lr=0.002, float beta1=0.9, float beta2=0.999, float eps=1e-8, float weightDecay=0, float step=1, bool maximize=false';
const NADAM = 'float lr=0.002, float beta1=0.9, float beta2=0.999, float eps=1e-8, float weightDecay=0, float momentumDecay=0.004, float step=1, float muProduct=1';
const ASGD = 'float lambd=0.0001, float eta=0.01, float mu=1, float weightDecay=0, bool maximize=false';
const RPROP = 'float etaMinus=0.5, float etaPlus=1.2, float stepSizeMin=1e-6, float stepSizeMax=50, bool maximize=false';

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
  { name: 'adamaxStep_', args: `Tensor param, Tensor grad, Tensor expAvg, Tensor expInf, ${ADAMAX}`, returns: 'Tensor',
    code: 'KD_OPTIM_ADAMAX', ...INTERNAL, doc: 'Adamax update (step is the new step count).' },
  { name: 'foreachAdamaxStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] expAvgs, Tensor[] expInfs, ${ADAMAX}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_ADAMAX', ...INTERNAL, doc: 'adamaxStep_ over lists of tensors.' },
  { name: 'nadamStep_', args: `Tensor param, Tensor grad, Tensor expAvg, Tensor expAvgSq, ${NADAM}`, returns: 'Tensor',
    code: 'KD_OPTIM_NADAM', ...INTERNAL,
    doc: 'NAdam update (step is the new step count, muProduct the product of the momentum cache through it, in float32).' },
  { name: 'foreachNadamStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] expAvgs, Tensor[] expAvgSqs, ${NADAM}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_NADAM', ...INTERNAL, doc: 'nadamStep_ over lists of tensors.' },
  { name: 'asgdStep_', args: `Tensor param, Tensor grad, Tensor ax, ${ASGD}`, returns: 'Tensor',
    code: 'KD_OPTIM_ASGD', ...INTERNAL, doc: 'ASGD update with this step\'s eta and mu (ax: the running average).' },
  { name: 'foreachAsgdStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] axs, ${ASGD}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_ASGD', ...INTERNAL, doc: 'asgdStep_ over lists of tensors.' },
  { name: 'rpropStep_', args: `Tensor param, Tensor grad, Tensor prev, Tensor stepSize, ${RPROP}`, returns: 'Tensor',
    code: 'KD_OPTIM_RPROP', ...INTERNAL, doc: 'Rprop update (prev: the last gradient; stepSize: per element).' },
  { name: 'foreachRpropStep_', args: `Tensor[] params, Tensor[] grads, Tensor[] prevs, Tensor[] stepSizes, ${RPROP}`,
    returns: 'Tensor[]', code: 'KD_OPTIM_RPROP', ...INTERNAL, doc: 'rpropStep_ over lists of tensors.' },
];
