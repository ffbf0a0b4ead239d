// qconfig.js - kd.ao.quantization's QConfig and the dynamic qconfigs of PyTorch 1.13
// (torch.ao.quantization.qconfig): defaultDynamicQConfig (weights qint8, one symmetric scale per
// tensor) and perChannelDynamicQConfig (one symmetric scale per output feature); the activation
// entry is a PlaceholderObserver (quint8): the input is quantized per call.
'use strict';

module.exports = function installQConfig(kd, { MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver }) {
  /** QConfig({activation, weight}): observer factories (PyTorch's QConfig namedtuple). */
  class QConfig {
    constructor(...args) {
      const o = args.length === 1 && args[0] && typeof args[0] === 'object' ? args[0] : { activation: args[0], weight: args[1] };
      this.activation = o.activation;
      this.weight = o.weight;
      Object.freeze(this);
    }
    toString() {
      const name = (f) => (f && f.observerClass ? `${f.observerClass.name}(${JSON.stringify(f.options)})` : String(f));
      return `QConfig(activation=${name(this.activation)}, weight=${name(this.weight)})`;
    }
  }

  const defaultDynamicQuantObserver = PlaceholderObserver.withArgs({ dtype: 'quint8', computeDtype: 'quint8' });
  const defaultWeightObserver = MinMaxObserver.withArgs({ dtype: 'qint8', qscheme: 'per_tensor_symmetric' });
  const defaultPerChannelWeightObserver = PerChannelMinMaxObserver.withArgs({ dtype: 'qint8', qscheme: 'per_channel_symmetric' });
  const defaultDynamicQConfig = new QConfig({ activation: defaultDynamicQuantObserver, weight: defaultWeightObserver });
  const perChannelDynamicQConfig = new QConfig({ activation: defaultDynamicQuantObserver, weight: defaultPerChannelWeightObserver });
  return {
    QConfig, defaultDynamicQuantObserver, defaultWeightObserver, defaultPerChannelWeightObserver,
    defaultDynamicQConfig, perChannelDynamicQConfig,
  };
};
