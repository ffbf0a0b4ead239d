/* data_async.c (napi) - the DataLoader's background batch gather: binding.gatherRows(handles,
 * indices) returns a Promise of [t.indexSelect(0, indices) for t of handles], computed on the libuv
 * thread pool (napi_create_async_work), so assembling batch k+1 overlaps the training step on
 * batch k. lib/data/ (kd.data.gatherRows, DataLoader's `for await`) is the only caller.
 *
 * Why the libuv pool and not a thread of our own: a gather is one short, bounded job (tens of
 * microseconds for a 64-row batch, milliseconds for big ones) with a Promise at the end, which is
 * exactly what async work is for; the pool (4 threads by default) lets a prefetch window of
 * several batches run side by side, and Node owns the threads' lifetime (worker_threads, exit).
 *
 * Note [Background gather thread safety]
 * The baton pattern: on the main thread (kd_gather_start) the handles are unwrapped, every source
 * tensor is retained and the indices are copied into a plain int64 buffer; the worker (execute)
 * touches no napi value, only the baton. What the worker calls, and why it is safe there:
 *   - tensor/storage refcounts are atomic (core/tensor.h, core/storage.h); the tensor/storage
 *     struct caches are thread-local (a struct freed on another thread joins that thread's list);
 *   - the host caching allocator has one mutex (core/alloc_host.c);
 *   - the dispatcher's include/exclude sets are thread-local: the worker runs with Autograd and
 *     Autocast excluded (saved and restored around the job), so the gather never records an
 *     autograd node (the graph is main-thread-only) and its results never require grad, even
 *     when a source tensor does;
 *   - kd_parallel_for: the worker marks itself inline (kd_parallel_set_thread_inline), so a
 *     gather never takes the pool from the training step running on the main thread (the pool
 *     runs one job at a time; a busy caller would run inline, single-threaded);
 *   - error messages are thread-local (core/status.c): the worker copies its message into the
 *     baton, and the main thread builds the JS error from it.
 * Source tensors are released on the main thread (complete), so a last reference dropped there
 * frees autograd metadata where the autograd layer lives. Sources must be CPU tensors (a CUDA
 * gather would need the device's current stream, which is main-thread state): KD_NOT_SUPPORTED.
 *
 * Note [Disposing a gather's sources]
 * The gather holds its own reference on every source tensor from the call until the Promise
 * settles, so disposing a source (t.dispose(), or the GC) while a gather is in flight never frees
 * memory the worker reads: the gather finishes with the data it was given, and the bytes go when
 * it settles. A handle already disposed when gatherRows is called is a KD_DISPOSED rejection.
 * DataLoader turns "the dataset's tensors were disposed mid-epoch" into a KD_DISPOSED error at the
 * next batch (lib/data/dataloader.js). */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "napi/napi_util.h"

#define KD_GATHER_MAX_TENSORS 64

typedef struct kd_gather_job {
  napi_async_work work;
  napi_deferred deferred;
  int n;                                   /* source tensors */
  kd_tensor *src[KD_GATHER_MAX_TENSORS];   /* retained on the main thread, released there */
  kd_tensor *out[KD_GATHER_MAX_TENSORS];   /* results (worker), wrapped or released on the main thread */
  int64_t *indices;
  int64_t nidx;
  kd_status status;
  char message[1024];
} kd_gather_job;

static void kd_gather_job_free(kd_gather_job *j) {
  for (int i = 0; i < j->n; i++) {
    kd_tensor_release(j->src[i]);
    kd_tensor_release(j->out[i]);
  }
  free(j->indices);
  free(j);
}

/* The worker: one indexSelect(0, indices) per source. See Note [Background gather thread safety]. */
static kd_status kd_gather_run(kd_gather_job *j) {
  kd_tensor *index = NULL;
  int64_t n = j->nidx;
  KD_TRY(kd_tensor_empty(&n, 1, KD_DTYPE_I64, kd_device_cpu(), &index));
  if (n) memcpy(kd_tensor_data(index), j->indices, sizeof(int64_t) * (size_t)n);
  kd_status st = KD_OK;
  for (int i = 0; i < j->n && st == KD_OK; i++) {
    kd_value args[3] = {kd_value_tensor(j->src[i]), kd_value_int(0), kd_value_tensor(index)};
    st = kd_call1(KD_OP_indexSelect, args, &j->out[i]);
  }
  kd_tensor_release(index);
  return st;
}

static void kd_gather_execute(napi_env env, void *data) {
  (void)env; /* not to be used off the main thread */
  kd_gather_job *j = (kd_gather_job *)data;
  kd_dispatch_tls saved = kd_dispatch_tls_get(), tls = saved;
  tls.included = 0;
  tls.excluded |= (kd_keyset)(KD_KEYSET(KD_KEY_AUTOGRAD) | KD_KEYSET(KD_KEY_AUTOCAST));
  kd_dispatch_tls_set(tls);
  kd_parallel_set_thread_inline(true);
  j->status = kd_gather_run(j);
  if (j->status != KD_OK) {
    strncpy(j->message, kd_last_error(), sizeof j->message - 1);
    j->message[sizeof j->message - 1] = '\0';
  }
  kd_parallel_set_thread_inline(false);
  kd_dispatch_tls_set(saved);
}

/* Rejects the job's promise with (code, message). */
static void kd_gather_reject(napi_env env, napi_deferred d, kd_status st, const char *msg) {
  kd_napi_throw_msg(env, st, "%s", msg);
  napi_value err = NULL;
  if (napi_get_and_clear_last_exception(env, &err) != napi_ok || !err) napi_get_undefined(env, &err);
  napi_reject_deferred(env, d, err);
}

static void kd_gather_complete(napi_env env, napi_status status, void *data) {
  kd_gather_job *j = (kd_gather_job *)data;
  if (status != napi_ok && j->status == KD_OK) {
    j->status = KD_ERR_INTERNAL;
    strcpy(j->message, status == napi_cancelled ? "gatherRows: the gather was cancelled" : "gatherRows: the gather failed");
  }
  if (j->status != KD_OK) {
    kd_gather_reject(env, j->deferred, j->status, j->message);
  } else {
    napi_value arr;
    napi_status ns = napi_create_array_with_length(env, j->n, &arr);
    for (int i = 0; i < j->n; i++) {
      kd_tensor *t = j->out[i];
      j->out[i] = NULL;
      napi_value h;
      if (ns == napi_ok) ns = kd_napi_wrap_tensor(env, t, &h); /* takes t's reference */
      else kd_tensor_release(t);
      if (ns == napi_ok) ns = napi_set_element(env, arr, i, h);
    }
    if (ns == napi_ok) {
      napi_resolve_deferred(env, j->deferred, arr);
    } else {
      napi_value exc;
      napi_get_and_clear_last_exception(env, &exc);
      kd_gather_reject(env, j->deferred, KD_ERR_INTERNAL, "gatherRows: could not return the batch");
    }
  }
  napi_delete_async_work(env, j->work);
  kd_gather_job_free(j); /* drops the sources' references (Note [Disposing a gather's sources]) */
  kd_napi_sync_external_memory(env);
}

/* Copies the indices (an Int32Array, Float64Array of integers or BigInt64Array) into j. */
static kd_status kd_gather_indices(napi_env env, napi_value v, kd_gather_job *j) {
  bool is_ta = false;
  napi_is_typedarray(env, v, &is_ta);
  if (!is_ta) return kd_error(KD_ERR_TYPE, "gatherRows: indices must be an Int32Array, Float64Array or BigInt64Array");
  napi_typedarray_type type;
  size_t len;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, &len, &p, NULL, NULL) != napi_ok)
    return kd_error(KD_ERR_TYPE, "gatherRows: bad indices");
  j->indices = (int64_t *)malloc(sizeof(int64_t) * (len ? len : 1));
  if (!j->indices) return kd_error(KD_ERR_OOM, "out of memory");
  j->nidx = (int64_t)len;
  for (size_t i = 0; i < len; i++) {
    switch (type) {
      case napi_int32_array: j->indices[i] = ((const int32_t *)p)[i]; break;
      case napi_bigint64_array: j->indices[i] = ((const int64_t *)p)[i]; break;
      case napi_float64_array: {
        double d = ((const double *)p)[i];
        if (!(d == (double)(int64_t)d) || d > 9007199254740992.0 || d < -9007199254740992.0)
          return kd_error(KD_ERR_TYPE, "gatherRows: index %zu is not an integer", i);
        j->indices[i] = (int64_t)d;
        break;
      }
      default: return kd_error(KD_ERR_TYPE, "gatherRows: indices must be an Int32Array, Float64Array or BigInt64Array");
    }
  }
  return KD_OK;
}

/* Main thread: unwraps and retains the sources, copies the indices. */
static kd_status kd_gather_prepare(napi_env env, napi_value list, napi_value indices, kd_gather_job *j) {
  bool is_array = false;
  napi_is_array(env, list, &is_array);
  if (!is_array) return kd_error(KD_ERR_TYPE, "gatherRows: expected an array of tensors");
  uint32_t n;
  napi_get_array_length(env, list, &n);
  if (n > KD_GATHER_MAX_TENSORS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "gatherRows: at most %d tensors per gather, got %u", KD_GATHER_MAX_TENSORS, n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value e;
    napi_get_element(env, list, i, &e);
    kd_tensor *t;
    KD_TRY(kd_napi_unwrap_tensor(env, e, "tensors", &t));
    if (kd_tensor_device(t).type != KD_DEVICE_CPU)
      return kd_error(KD_ERR_NOT_SUPPORTED, "gatherRows: background gathers need CPU tensors (tensor %u is on the GPU)", i);
    if (t->ndim == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "gatherRows: tensor %u is 0-d (rows need a dim 0)", i);
    kd_tensor_retain(t);
    j->src[j->n++] = t;
  }
  return kd_gather_indices(env, indices, j);
}

static napi_value kd_napi_gather_rows(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], undefined;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  KD_NAPI_CALL(env, napi_get_undefined(env, &undefined));
  if (argc < 2) argv[1] = undefined;
  if (argc < 1) argv[0] = undefined;
  kd_gather_job *j = (kd_gather_job *)calloc(1, sizeof *j);
  if (!j) return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  napi_value promise;
  if (napi_create_promise(env, &j->deferred, &promise) != napi_ok) {
    kd_gather_job_free(j);
    return kd_napi_throw_last(env, napi_generic_failure);
  }
  kd_status st = kd_gather_prepare(env, argv[0], argv[1], j);
  if (st != KD_OK) { /* argument errors are rejections too, so callers have one error path */
    kd_gather_reject(env, j->deferred, st, kd_last_error());
    kd_gather_job_free(j);
    return promise;
  }
  napi_value name;
  napi_status ns = napi_create_string_utf8(env, "kindling.gatherRows", NAPI_AUTO_LENGTH, &name);
  if (ns == napi_ok) ns = napi_create_async_work(env, NULL, name, kd_gather_execute, kd_gather_complete, j, &j->work);
  if (ns == napi_ok) ns = napi_queue_async_work(env, j->work);
  if (ns != napi_ok) {
    if (j->work) napi_delete_async_work(env, j->work);
    napi_value exc;
    napi_get_and_clear_last_exception(env, &exc);
    kd_gather_reject(env, j->deferred, KD_ERR_INTERNAL, "gatherRows: could not queue the gather");
    kd_gather_job_free(j);
  }
  return promise;
}

napi_status kd_napi_register_data_async(napi_env env, napi_value exports) {
  return kd_napi_set_fn(env, exports, "gatherRows", kd_napi_gather_rows, NULL);
}
