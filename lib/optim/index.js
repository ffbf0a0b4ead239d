// optim/index.js - kd.optim: SGD, Adam, AdamW, RMSprop, Adagrad (fused native updates, see
// src/ops/oplist/optim.js), Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop, SparseAdam, LBFGS,
// kd.optim.lrScheduler and kd.optim.swaUtils. Installed by lib/index.js.
'use strict';

module.exports = (kd) => {
  const Optimizer = require('./optimizer')(kd);
  const { Adam, AdamW } = require('./adam')(kd, Optimizer);
  const lrScheduler = require('./lr_scheduler')(kd, Optimizer);
  Object.assign(lrScheduler, require('./lr_scheduler_more')(kd, Optimizer, lrScheduler));
  return {
    Optimizer,
    SGD: require('./sgd')(kd, Optimizer),
    Adam,
    AdamW,
    RMSprop: require('./rmsprop')(kd, Optimizer),
    Adagrad: require('./adagrad')(kd, Optimizer),
    Adadelta: require('./adadelta')(kd, Optimizer),
    Adamax: require('./adamax')(kd, Optimizer),
    ASGD: require('./asgd')(kd, Optimizer),
    NAdam: require('./nadam')(kd, Optimizer),
    RAdam: require('./radam')(kd, Optimizer),
    Rprop: require('./rprop')(kd, Optimizer),
    SparseAdam: require('./sparse_adam')(kd, Optimizer),
    LBFGS: require('./lbfgs')(kd, Optimizer),
    lrScheduler,
    swaUtils: require('./swa_utils')(kd, lrScheduler),
  };
};
