// distributed/index.js - kd.distributed: the rendezvous stores of PyTorch's c10d (TCPStore,
// PrefixStore). Process groups and collectives build on these.
'use strict';
const { TCPStore, PrefixStore } = require('./tcp_store');

module.exports = function installDistributed(kd) {
  kd.distributed = { TCPStore, PrefixStore };
};
