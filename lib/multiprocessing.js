// multiprocessing.js - kd.multiprocessing: tensors shared between worker threads, the part of
// torch.multiprocessing that Hogwild-style training needs. Node's workers are threads of one
// process, so sharing needs no shared-memory segment: a tensor is registered in a process-wide
// table (src/core/tensor.c, Note [Shared tensors]) and another thread makes its own tensor over
// the same bytes from the registration's id. Writes on either side are seen by both; each side
// keeps its own autograd version counter, as PyTorch's processes do.
//
//   t.shareMemory_()                        registers t (idempotent); t.isShared() -> true
//   module.shareMemory()                    shareMemory_() on every parameter and buffer
//   const r = kd.multiprocessing.reduceTensor(t)   // a plain object: postMessage / workerData
//   const u = kd.multiprocessing.rebuildTensor(r)  // in the worker: same bytes (a Parameter if t was one)
//   param.data = u                          // a worker's module trains the shared weights
//
// The registration lasts while the registered Tensor object is reachable (a FinalizationRegistry
// drops it when the object is collected); a tensor rebuilt from it holds the bytes as long as it
// lives. Rebuilding from a registration already dropped is a KD_INVALID_ARGUMENT error.
'use strict';

const { typeError } = require('./errors');

const KEY = '__kindlingSharedTensor';

module.exports = function installMultiprocessing(kd, Tensor, N) {
  const ids = new WeakMap(); // Tensor -> registration id (tensors registered on this thread)
  const rebuilt = new WeakSet(); // tensors made from a registration
  const registrations = new FinalizationRegistry((id) => N.unshare(id));

  /** PyTorch's share_memory_(): makes the tensor shareable with other threads; returns it. */
  Tensor.prototype.shareMemory_ = function shareMemory_() {
    if (!ids.has(this) && !rebuilt.has(this)) {
      const id = N.share(this._h);
      ids.set(this, id);
      registrations.register(this, id);
    }
    return this;
  };

  /** Whether the tensor was shared (shareMemory_) or rebuilt from a shared tensor. */
  Tensor.prototype.isShared = function isShared() {
    return ids.has(this) || rebuilt.has(this);
  };

  /** A plain object standing for t in another thread (t is shared first). */
  function reduceTensor(t) {
    if (!(t instanceof Tensor)) throw typeError(`reduceTensor(t): t must be a Tensor, got ${t === null ? 'null' : typeof t}`);
    if (rebuilt.has(t)) throw typeError('reduceTensor(t): t was itself rebuilt from a shared tensor; reduce the original');
    t.shareMemory_();
    return { [KEY]: true, id: ids.get(t), requiresGrad: t.requiresGrad, parameter: t instanceof kd.nn.Parameter };
  }

  /** The tensor reduceTensor(t) stands for, over t's bytes (a Parameter when t was one). */
  function rebuildTensor(r) {
    if (r === null || typeof r !== 'object' || r[KEY] !== true) {
      throw typeError('rebuildTensor(r): r must be what kd.multiprocessing.reduceTensor returned');
    }
    let t = new Tensor(N.fromShared(r.id));
    if (r.parameter) {
      const p = new kd.nn.Parameter(t, r.requiresGrad);
      t.dispose();
      t = p;
    } else if (r.requiresGrad) {
      t.requiresGrad_(true);
    }
    rebuilt.add(t);
    return t;
  }

  kd.multiprocessing = { reduceTensor, rebuildTensor };
};
