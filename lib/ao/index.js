// index.js - installs kd.ao: kd.ao.quantization (quantizeDynamic, QConfig, the dynamic qconfigs
// and their observers) and kd.ao.nn.quantized.dynamic.Linear, with kd.ao.QuantizedTensor (what
// a quantized layer's weight() returns). See docs/QUANTIZATION.md. Called once from lib/index.js,
// after kd.nn.
'use strict';

module.exports = function installAo(kd) {
  const QuantizedTensor = require('./quantized_tensor')(kd);
  const observers = require('./observer')(kd);
  const qconfig = require('./qconfig')(kd, observers);
  const { Linear, LinearPackedParams } = require('./dynamic_linear')(kd, QuantizedTensor);
  const { quantizeDynamic, defaultMapping } = require('./quantize_dynamic')(kd, qconfig, Linear);
  const { MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver } = observers;
  const quantization = {
    quantizeDynamic, getDefaultDynamicQuantModuleMappings: defaultMapping, ...qconfig,
    MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver,
  };
  const dynamic = { Linear, LinearPackedParams };
  kd.ao = { quantization, nn: { quantized: { dynamic } }, QuantizedTensor };
  return kd.ao;
};
