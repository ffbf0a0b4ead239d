// distributed/index.js - kd.distributed: the rendezvous stores of PyTorch's c10d (TCPStore,
// FileStore, PrefixStore). Process groups and collectives build on these.
'use strict';
const { TCPStore, PrefixStore } = require('./tcp_store');
const { FileStore } = require('./file_store');

module.exports = function installDistributed(kd) {
  kd.distributed = { TCPStore, FileStore, PrefixStore };
};
