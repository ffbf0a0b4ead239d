// index.js - installs kd.nn: Module and Parameter (module.js), init, the layers (linear, conv,
// norm, activation, container, attention, transformer, loss, rnn, ...) and utils (with utils.rnn). kd.nn.functional
// (the generated ops) is kept: this adds to the kd.nn object, never replaces it. Called once from
// lib/index.js.
'use strict';

module.exports = function installNn(kd) {
  const nn = kd.nn || (kd.nn = {});
  const base = require('./module')(kd, nn);
  require('./module_methods')(kd, nn, base);
  require('./module_hooks')(kd, nn, base);
  require('./module_devices')(kd, nn, base);
  require('./init')(kd, nn, base);
  require('./linear')(kd, nn, base);
  require('./activation')(kd, nn, base);
  require('./functional_conv')(kd, nn, base);
  require('./conv_tbc')(kd, nn, base);
  require('./functional_pool')(kd, nn, base);
  require('./conv')(kd, nn, base);
  require('./fold')(kd, nn, base);
  require('./pooling')(kd, nn, base);
  require('./norm')(kd, nn, base);
  require('./norm_instance')(kd, nn, base);
  require('./padding')(kd, nn, base);
  require('./upsampling')(kd, nn, base);
  require('./container')(kd, nn, base);
  require('./attention')(kd, nn, base);
  require('./transformer')(kd, nn, base);
  require('./loss')(kd, nn, base);
  require('./parameter_containers')(kd, nn, base);
  require('./uninitialized')(kd, nn, base);
  require('./lazy')(kd, nn, base); // after the layers it makes lazy variants of
  require('./utils')(kd, nn, base);
  require('./fusion')(kd, nn, base);
  require('./stateless')(kd, nn, base);
  require('./weight_norm')(kd, nn, base);
  require('./spectral_norm')(kd, nn, base);
  require('./prune')(kd, nn, base);
  require('./parametrize')(kd, nn, base); // after container (ModuleList, ModuleDict)
  require('./parametrizations')(kd, nn, base);
  require('./functional_activation')(kd, nn, base);
  require('./activation_extra')(kd, nn, base);
  require('./dropout')(kd, nn, base);
  require('./functional_loss')(kd, nn, base);
  require('./ctc')(kd, nn, base);
  require('./grid_sample')(kd, nn, base);
  require('./loss_extra')(kd, nn, base);
  require('./distance')(kd, nn, base);
  require('./shuffle')(kd, nn, base);
  require('./embedding_bag')(kd, nn, base);
  require('./adaptive')(kd, nn, base);
  require('./rnn_utils')(kd, nn, base);
  require('./rnn')(kd, nn, base);
  require('./rnn_cell')(kd, nn, base);
  require('./data_parallel')(kd, nn, base);
  require('./sync_batchnorm')(kd, nn, base); // after norm (NormBase, BatchNorm*d)
  return nn;
};
