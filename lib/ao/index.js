// index.js - installs kd.ao: kd.ao.quantization (quantizeDynamic, QConfig, the dynamic qconfigs
// and their observers) and kd.ao.nn.quantized.dynamic.Linear, LSTM and GRU, with kd.ao.QuantizedTensor (what
// a quantized layer's weight() returns). See docs/QUANTIZATION.md. Called once from lib/index.js,
// after kd.nn.
'use strict';

module.exports = function installAo(kd) {
  const QuantizedTensor = require('./quantized_tensor')(kd);
  const observers = require('./observer')(kd);
  const qconfig = require('./qconfig')(kd, observers);
  const linear = require('./dynamic_linear')(kd, QuantizedTensor);
  const { Linear, LinearPackedParams } = linear;
  const { LSTM, GRU } = require('./dynamic_rnn')(kd, linear);
  const { quantizeDynamic, defaultMapping } = require('./quantize_dynamic')(kd, qconfig, { Linear, LSTM, GRU });
  const { MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver } = observers;
  const quantization = {
    quantizeDynamic, getDefaultDynamicQuantModuleMappings: defaultMapping, ...qconfig,
    MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver,
  };
  const dynamic = { Linear, LinearPackedParams, LSTM, GRU };
  kd.ao = { quantization, nn: { quantized: { dynamic } }, QuantizedTensor };
  return kd.ao;
};
