// index.js - installs kd.nn: Module and Parameter (module.js), init, the layers (linear, conv,
// norm, activation, container, attention, loss) and utils. kd.nn.functional (the generated ops)
// is kept: this adds to the kd.nn object, never replaces it. Called once from lib/index.js.
'use strict';

module.exports = function installNn(kd) {
  const nn = kd.nn || (kd.nn = {});
  const base = require('./module')(kd, nn);
  require('./init')(kd, nn, base);
  require('./linear')(kd, nn, base);
  require('./activation')(kd, nn, base);
  require('./conv')(kd, nn, base);
  require('./norm')(kd, nn, base);
  require('./container')(kd, nn, base);
  require('./attention')(kd, nn, base);
  require('./loss')(kd, nn, base);
  require('./utils')(kd, nn, base);
  require('./module_copy')(kd, nn, base);
  return nn;
};
