// optim/index.js - kd.optim: SGD, Adam, AdamW, RMSprop, Adagrad (fused native updates, see
// src/ops/oplist/optim.js) and kd.optim.lrScheduler. Installed by lib/index.js.
'use strict';

module.exports = (kd) => {
  const Optimizer = require('./optimizer')(kd);
  const { Adam, AdamW } = require('./adam')(kd, Optimizer);
  return {
    Optimizer,
    SGD: require('./sgd')(kd, Optimizer),
    Adam,
    AdamW,
    RMSprop: require('./rmsprop')(kd, Optimizer),
    Adagrad: require('./adagrad')(kd, Optimizer),
    lrScheduler: require('./lr_scheduler')(kd, Optimizer),
  };
};
