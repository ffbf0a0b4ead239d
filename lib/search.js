// search.js - the JS side of the search family's ops: uniqueConsecutive's result is one tensor
// without returnInverse/returnCounts and an array with them (as unique's, see indexing.js).
'use strict';

module.exports = function installSearch(kd, Tensor) {
  const rawUniqueConsecutive = kd.uniqueConsecutive;
  function uniqueConsecutive(...args) {
    const r = rawUniqueConsecutive(...args);
    return r.length === 1 ? r[0] : r;
  }
  kd.uniqueConsecutive = uniqueConsecutive;
  Tensor.prototype.uniqueConsecutive = function (...args) { return uniqueConsecutive(this, ...args); };
};
