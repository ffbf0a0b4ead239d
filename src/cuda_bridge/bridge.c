/* bridge.c - the CPU addon's side of the CUDA backend (see bridge.h). Plain C11; never links
 * CUDA: everything CUDA goes through the kd_cuda_api table of libkindling_cuda.so
 * (cuda/kd_cuda_api.h), dlopen'ed once, on first use.
 *
 * Note [CUDA loading]
 * The first call that needs CUDA (kd_device_backend_get(KD_DEVICE_CUDA), kd.cuda.*) runs
 * kd_cuda_do_load exactly once per process (pthread_once): find the library ($KINDLING_CUDA_LIBRARY,
 * else next to kindling.node, found with dladdr, else in a directory lib/index.js added: the
 * optional package kindling-cuda-linux-x64, build/Release under a prebuilt addon), dlopen it, look up
 * kd_cuda_get_api, check the ABI version, call init (driver and GPU discovery). Any failure is
 * remembered as a reason string and every later call fails with KD_ERR_CUDA_UNAVAILABLE and that
 * reason, without trying again. On success the CUDA device backend and the CUDA kernels
 * (copy_, fill_) are registered. The library is never dlclose'd: it links the CUDA runtime
 * statically, whose exit-time teardown must find its code still mapped.
 *
 * Note [CUDA copy_]
 * copy_(dst, src) broadcasts src to dst's shape and converts dtypes, for every direction:
 *   CUDA -> CUDA (one device): one strided-copy kernel (a memcpy when both are contiguous with
 *     one dtype); a src overlapping dst is first staged into a contiguous temporary.
 *   CUDA -> CUDA (two devices): src made contiguous on its device, peer copy, then a kernel on
 *     dst's device when dst is strided, broadcast or of another dtype.
 *   CPU -> CUDA: src made contiguous on the host (CPU copy_), host-to-device memcpy, then a
 *     kernel on the device when needed (strided dst, broadcast, other dtype).
 *   CUDA -> CPU: src made contiguous on the device, device-to-host memcpy, then CPU copy_
 *     into dst when needed.
 * Temporaries keep src's own shape and dtype, so no more bytes than src's cross the bus. */
#define _GNU_SOURCE
#include "cuda_bridge/bridge.h"
#include "cuda_bridge/deferred_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cuda/kd_cuda_api.h"
#include "core/device.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_hooks.h"

#include "cpu/device_op.h"
#include "dispatch/dispatch.h"
#include "ops/ew_codes.h"
#include "ops/kernel.h"

_Static_assert(KD_CUDA_MAX_DIMS == KD_MAX_DIMS, "kd_cuda_array and kd_tensor must agree on the dim limit");
_Static_assert(KD_DTYPE_COUNT == 10, "the CUDA library's dtype switches must learn the new dtype");

static pthread_once_t kd_cuda_once = PTHREAD_ONCE_INIT;
static const kd_cuda_api *kd_cuda;   /* non-NULL once loaded and initialised */
static kd_cuda_emu_stats_fn kd_cuda_emu_stats_get; /* set when the library is the emulated GPU */
static char kd_cuda_reason[1024];    /* why CUDA is unavailable; "" if available or untried */

static void kd_cuda_set_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kd_cuda_set_reason(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kd_cuda_reason, sizeof kd_cuda_reason, fmt, ap);
  va_end(ap);
}

/* ---- errors ---- */

/* Note [Refused during graph capture]: while a CUDA graph is captured on a device (set by
 * kd_cuda_set_capturing), the bridge refuses its sync points (a device-to-host copy, a device
 * synchronisation) before they reach CUDA, with KD_ERR_CUDA_GRAPH_CAPTURE: the capture stays
 * valid and the device usable. Any other CUDA failure while a capture runs (a library call that
 * reads a result on the host, such as nonzero's count, which invalidates the capture) is
 * reported with the same code. */
static _Atomic int kd_cuda_capturing[64];
static _Atomic int kd_cuda_captures;

void kd_cuda_set_capturing(int device, bool on) {
  if (device < 0 || device >= 64 || (!on && kd_cuda_capturing[device] <= 0)) return;
  kd_cuda_capturing[device] += on ? 1 : -1;
  kd_cuda_captures += on ? 1 : -1;
}

kd_status kd_cuda_capture_refuse(int device, const char *what) {
  if (device < 0 || device >= 64 || kd_cuda_capturing[device] <= 0) return KD_OK;
  return kd_error(KD_ERR_CUDA_GRAPH_CAPTURE,
                  "%s is not allowed while a CUDA graph is being captured on cuda:%d (it would wait for the device "
                  "or read device memory on the host); do it before capture or after replay",
                  what, device);
}

static kd_status kd_cuda_fail(kd_cuda_status s) {
  kd_status k;
  switch (s) {
    case KD_CUDA_ERR_OOM: k = KD_ERR_CUDA_OOM; break;
    case KD_CUDA_ERR_NO_DRIVER:
    case KD_CUDA_ERR_NO_DEVICE: k = KD_ERR_CUDA_UNAVAILABLE; break;
    case KD_CUDA_ERR_INVALID_ARGUMENT: k = KD_ERR_INVALID_ARGUMENT; break;
    case KD_CUDA_ERR_NOT_SUPPORTED: k = KD_ERR_NOT_SUPPORTED; break;
    default: k = KD_ERR_CUDA; break;
  }
  const char *msg = kd_cuda->last_error();
  if (kd_cuda_captures > 0 && k == KD_ERR_CUDA) /* See Note [Refused during graph capture] */
    return kd_error(KD_ERR_CUDA_GRAPH_CAPTURE, "operation not allowed while a CUDA graph is being captured: %s",
                    msg && *msg ? msg : kd_cuda->status_name(s));
  return kd_error(k, "%s", msg && *msg ? msg : kd_cuda->status_name(s));
}

#define KD_CUDA_TRY(call)                                                                   \
  do {                                                                                      \
    kd_cuda_status kd_cuda_s_ = (call);                                                     \
    if (kd_cuda_s_ != KD_CUDA_OK) return kd_cuda_fail(kd_cuda_s_);                          \
  } while (0)

/* ---- the device backend ---- */

static int kd_cuda_be_device_count(void) {
  int n = 0;
  return kd_cuda->device_count(&n) == KD_CUDA_OK ? n : 0;
}

static int kd_cuda_be_current_device(void) {
  int d = 0;
  return kd_cuda->current_device(&d) == KD_CUDA_OK ? d : 0;
}

static kd_status kd_cuda_be_alloc(int index, size_t nbytes, void **out) {
  KD_CUDA_TRY(kd_cuda->malloc(index, nbytes, out));
  return KD_OK;
}

static void kd_cuda_be_free(int index, void *ptr, size_t nbytes) {
  (void)nbytes;
  (void)kd_cuda->free(index, ptr); /* nothing to report to: a dead context keeps its memory */
}

static _Thread_local bool kd_cuda_non_blocking;

void kd_cuda_set_non_blocking(bool on) { kd_cuda_non_blocking = on; }

static kd_status kd_cuda_be_memcpy(void *dst, kd_device dst_dev, const void *src, kd_device src_dev, size_t n) {
  if (n == 0) return KD_OK;
  if (dst_dev.type == KD_DEVICE_CUDA && src_dev.type == KD_DEVICE_CUDA)
    KD_CUDA_TRY(kd_cuda->memcpy_d2d(dst_dev.index, dst, src_dev.index, src, n));
  else if (dst_dev.type == KD_DEVICE_CUDA && kd_cuda_non_blocking && kd_cuda->host_owns(src))
    KD_CUDA_TRY(kd_cuda->memcpy_h2d_async(dst_dev.index, dst, src, n));
  else if (dst_dev.type == KD_DEVICE_CUDA)
    KD_CUDA_TRY(kd_cuda->memcpy_h2d(dst_dev.index, dst, src, n));
  else if (src_dev.type == KD_DEVICE_CUDA) { /* a sync point: deferred index errors surface here */
    kd_status st = kd_cuda_capture_refuse(src_dev.index, "reading a CUDA tensor on the host (item(), dataSync(), ...)");
    if (st != KD_OK) return st;
    KD_CUDA_TRY(kd_cuda->memcpy_d2h(src_dev.index, dst, src, n));
    return kd_cuda_deferred_take(src_dev.index);
  }
  else
    memmove(dst, src, n);
  return KD_OK;
}

static const kd_device_backend kd_cuda_backend = {
    /* .name           = */ "cuda",
    /* .device_count   = */ kd_cuda_be_device_count,
    /* .current_device = */ kd_cuda_be_current_device,
    /* .alloc          = */ kd_cuda_be_alloc,
    /* .free           = */ kd_cuda_be_free,
    /* .memcpy         = */ kd_cuda_be_memcpy,
};

/* ---- kernels: helpers ---- */

static void kd_cuda_array_of(const kd_tensor *t, kd_cuda_array *a) {
  memset(a, 0, sizeof *a);
  a->data = t->storage->data;
  a->dtype = (int32_t)t->dtype;
  a->ndim = t->ndim;
  a->offset = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    a->sizes[d] = t->sizes[d];
    a->strides[d] = t->strides[d];
  }
}

/* src viewed with dst's shape: right-aligned, stride 0 where src is missing a dim or has size
 * 1 against a larger size (kd_cuda_check_broadcast has checked compatibility). */
static void kd_cuda_array_broadcast(const kd_tensor *src, const kd_tensor *dst, kd_cuda_array *a) {
  kd_cuda_array_of(src, a);
  a->ndim = dst->ndim;
  int lead = dst->ndim - src->ndim;
  for (int d = 0; d < dst->ndim; d++) {
    int sd = d - lead;
    a->sizes[d] = dst->sizes[d];
    a->strides[d] = (sd < 0 || (src->sizes[sd] == 1 && dst->sizes[d] != 1)) ? 0 : src->strides[sd];
  }
}

/* PyTorch's copy_ rule (TensorIterator without output resizing): src and dst broadcast together
 * and the result must be exactly dst's shape. */
static kd_status kd_cuda_check_broadcast(const kd_tensor *dst, const kd_tensor *src) {
  int64_t shape[KD_MAX_DIMS];
  int n = 0;
  KD_TRY(kd_shape_broadcast(dst->sizes, dst->ndim, src->sizes, src->ndim, shape, &n));
  if (n == dst->ndim && memcmp(shape, dst->sizes, sizeof(int64_t) * (size_t)n) == 0) return KD_OK;
  char a[256], b[256];
  kd_shape_format(dst->sizes, dst->ndim, a, sizeof a);
  kd_shape_format(shape, n, b, sizeof b);
  return kd_error(KD_ERR_SHAPE, "output with shape %s doesn't match the broadcast shape %s", a, b);
}

static size_t kd_cuda_nbytes(const kd_tensor *t) { return (size_t)kd_tensor_numel(t) * kd_dtype_size(t->dtype); }

/* dst <- src needs nothing but a memcpy: same dtype, both contiguous, no broadcast. */
static bool kd_cuda_is_plain_copy(const kd_tensor *dst, const kd_tensor *src) {
  return dst->dtype == src->dtype && kd_tensor_numel(dst) == kd_tensor_numel(src) && kd_tensor_is_contiguous(dst) &&
         kd_tensor_is_contiguous(src);
}

/* Byte range [lo, hi) a tensor touches in its storage. */
static void kd_cuda_extent(const kd_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t a = t->offset, b = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t span = (t->sizes[d] - 1) * t->strides[d];
    if (span < 0) a += span;
    else b += span;
  }
  int64_t es = (int64_t)kd_dtype_size(t->dtype);
  *lo = a * es;
  *hi = (b + 1) * es;
}

static bool kd_cuda_same_view(const kd_tensor *dst, const kd_tensor *src) {
  if (dst->storage != src->storage || dst->dtype != src->dtype || dst->offset != src->offset) return false;
  kd_cuda_array b;
  kd_cuda_array_broadcast(src, dst, &b);
  for (int d = 0; d < dst->ndim; d++)
    if (dst->sizes[d] > 1 && dst->strides[d] != b.strides[d]) return false;
  return true;
}

static bool kd_cuda_may_overlap(const kd_tensor *dst, const kd_tensor *src) {
  if (dst->storage != src->storage) return false;
  int64_t dl, dh, sl, sh;
  kd_cuda_extent(dst, &dl, &dh);
  kd_cuda_extent(src, &sl, &sh);
  return dl < sh && sl < dh;
}

/* dst <- src (broadcast) on dst's device, both on it. */
static kd_status kd_cuda_kernel_copy(const kd_tensor *dst, const kd_tensor *src) {
  kd_cuda_array a, b;
  kd_cuda_array_of(dst, &a);
  kd_cuda_array_broadcast(src, dst, &b);
  KD_CUDA_TRY(kd_cuda->copy(kd_tensor_device(dst).index, &a, &b));
  return KD_OK;
}

/* copy_ on the CPU, below autograd (for host-side staging). */
static kd_status kd_cuda_cpu_copy(kd_tensor *dst, kd_tensor *src) {
  kd_value args[2] = {kd_value_tensor(dst), kd_value_tensor(src)};
  kd_value outs[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) outs[i] = kd_value_none();
  kd_status st = kd_redispatch(&kd_ops[KD_OP_copy_], KD_KEYSET(KD_KEY_CPU), args, outs);
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
  return st;
}

/* A new contiguous tensor with src's shape, dtype and device, holding src's values. */
static kd_status kd_cuda_contiguous_on_same_device(kd_tensor *src, kd_tensor **out) {
  kd_tensor *t;
  KD_TRY(kd_tensor_empty(src->sizes, src->ndim, src->dtype, kd_tensor_device(src), &t));
  kd_status st = kd_tensor_device(src).type == KD_DEVICE_CUDA ? kd_cuda_kernel_copy(t, src) : kd_cuda_cpu_copy(t, src);
  if (st != KD_OK) {
    kd_tensor_release(t);
    return st;
  }
  *out = t;
  return KD_OK;
}

/* ---- kernels: copy_ (see Note [CUDA copy_]) ---- */

/* A copy between two different devices (CPU<->GPU, or GPU<->another GPU): src is made
 * contiguous on its own device, its bytes cross with ONE memcpy, and any dtype conversion or
 * strided layout of dst is then done on dst's device (device kernel or CPU copy_). */
static kd_status kd_cuda_copy_across(kd_tensor *dst, kd_tensor *src) {
  kd_device dd = kd_tensor_device(dst), sd = kd_tensor_device(src);
  kd_tensor *src_tmp = NULL, *dst_tmp = NULL;
  kd_status st = KD_OK;
  if (!kd_tensor_is_contiguous(src)) {
    KD_TRY(kd_cuda_contiguous_on_same_device(src, &src_tmp));
    src = src_tmp;
  }
  if (kd_cuda_is_plain_copy(dst, src)) {
    st = kd_cuda_be_memcpy(kd_tensor_data(dst), dd, kd_tensor_data(src), sd, kd_cuda_nbytes(src));
  } else {
    st = kd_tensor_empty(src->sizes, src->ndim, src->dtype, dd, &dst_tmp);
    if (st == KD_OK) st = kd_cuda_be_memcpy(kd_tensor_data(dst_tmp), dd, kd_tensor_data(src), sd, kd_cuda_nbytes(src));
    if (st == KD_OK) st = dd.type == KD_DEVICE_CUDA ? kd_cuda_kernel_copy(dst, dst_tmp) : kd_cuda_cpu_copy(dst, dst_tmp);
  }
  if (dst_tmp) kd_tensor_release(dst_tmp);
  if (src_tmp) kd_tensor_release(src_tmp);
  return st;
}

static kd_status kd_cuda_copy_d2d(kd_tensor *dst, kd_tensor *src) {
  kd_device dd = kd_tensor_device(dst), sd = kd_tensor_device(src);
  kd_tensor *tmp = NULL;
  kd_status st = KD_OK;
  if (dd.index == sd.index) {
    if (kd_cuda_same_view(dst, src)) return KD_OK;
    if (kd_cuda_may_overlap(dst, src)) {
      KD_TRY(kd_cuda_contiguous_on_same_device(src, &tmp));
      src = tmp;
    }
    st = kd_cuda_kernel_copy(dst, src);
    if (tmp) kd_tensor_release(tmp);
    return st;
  }
  return kd_cuda_copy_across(dst, src);
}

static KD_KERNEL(kd_cuda_copy_) {
  (void)op;
  (void)ks;
  kd_tensor *dst = args[0].v.t, *src = args[1].v.t;
  KD_TRY(kd_cuda_check_broadcast(dst, src));
  if (kd_tensor_numel(dst) > 0) {
    bool dc = kd_tensor_device(dst).type == KD_DEVICE_CUDA, sc = kd_tensor_device(src).type == KD_DEVICE_CUDA;
    if (dc && sc) KD_TRY(kd_cuda_copy_d2d(dst, src));
    else if (dc || sc) KD_TRY(kd_cuda_copy_across(dst, src));
    else KD_TRY(kd_cuda_cpu_copy(dst, src));
  }
  kd_out_retain(outs, 0, dst);
  return KD_OK;
}

/* ---- kernels: fill_ ---- */

static KD_KERNEL(kd_cuda_fill_) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  if (args[1].kind != KD_VALUE_SCALAR) return kd_error(KD_ERR_TYPE, "fill_: expected a number or a boolean value");
  unsigned char value[8] = {0};
  kd_scalar_store(args[1].v.s, self->dtype, value);
  kd_cuda_array a;
  kd_cuda_array_of(self, &a);
  KD_CUDA_TRY(kd_cuda->fill(kd_tensor_device(self).index, &a, value));
  kd_out_retain(outs, 0, self);
  return KD_OK;
}

/* ---- pinned CPU storages ----
 * Once CUDA is loaded the CPU device backend is wrapped: an allocation made while
 * kd_storage_pinning() is set (kd_cuda_pin_memory) comes from the CUDA library's pinned caching host
 * allocator, and a free of such a block goes back to it; everything else goes to the original
 * CPU backend. The lookup on free is skipped until the first pinned allocation. */

static const kd_device_backend *kd_cuda_cpu_orig;
static kd_device_backend kd_cuda_cpu_wrapped;
static int kd_cuda_ever_pinned;

static kd_status kd_cuda_cpu_alloc(int index, size_t nbytes, void **out) {
  if (kd_storage_pinning()) {
    __atomic_store_n(&kd_cuda_ever_pinned, 1, __ATOMIC_RELEASE);
    KD_CUDA_TRY(kd_cuda->host_alloc(nbytes, out));
    return KD_OK;
  }
  return kd_cuda_cpu_orig->alloc(index, nbytes, out);
}

static void kd_cuda_cpu_free(int index, void *ptr, size_t nbytes) {
  if (ptr && __atomic_load_n(&kd_cuda_ever_pinned, __ATOMIC_ACQUIRE) && kd_cuda->host_owns(ptr)) {
    kd_cuda->host_free(ptr);
    return;
  }
  kd_cuda_cpu_orig->free(index, ptr, nbytes);
}

static void kd_cuda_wrap_cpu_backend(void) {
  if (kd_device_backend_get(KD_DEVICE_CPU, &kd_cuda_cpu_orig) != KD_OK || !kd_cuda_cpu_orig) return;
  kd_cuda_cpu_wrapped = *kd_cuda_cpu_orig;
  kd_cuda_cpu_wrapped.alloc = kd_cuda_cpu_alloc;
  kd_cuda_cpu_wrapped.free = kd_cuda_cpu_free;
  kd_device_backend_register(KD_DEVICE_CPU, &kd_cuda_cpu_wrapped);
}

/* ---- kernels: pointwise ops (Note [Device kernels through the CPU kernels], ops/ew_codes.h) ----
 * The CPU kernels of the pointwise families do the checks, promotion, casts and allocation on
 * any device; their last step (kd_cpu_iter_run) calls this hook for CUDA outputs, which hands
 * the built iteration to the library's elementwise entry. */

static kd_status kd_cuda_ew_launch(kd_device dev, const kd_ew_desc *d, const kd_iter *it, const kd_iter_operand *ops) {
  if (it->nops > KD_CUDA_EW_MAX_OPS || it->ndim > KD_CUDA_MAX_DIMS)
    return kd_error(KD_ERR_INTERNAL, "CUDA pointwise launch: %d operands, %d dims", it->nops, it->ndim);
  if (it->numel == 0) return KD_OK;
  kd_cuda_ew e;
  memset(&e, 0, sizeof e);
  e.family = d->family;
  e.code = d->code;
  for (int i = 0; i < 4; i++) e.p[i] = d->p[i];
  e.ip[0] = d->i[0];
  e.ip[1] = d->i[1];
  e.nops = it->nops;
  e.ndim = it->ndim;
  e.numel = it->numel;
  for (int k = 0; k < it->nops; k++) {
    e.dtypes[k] = (int32_t)it->dtypes[k];
    if (ops[k].sizes == NULL && ops[k].ndim == 0) { /* a host scalar (kd_cpu_scalar_operand) */
      memcpy(&e.scalar[k], it->data[k], kd_dtype_size(it->dtypes[k]));
      e.data[k] = NULL;
    } else {
      e.data[k] = it->data[k];
    }
    for (int dd = 0; dd < it->ndim; dd++) e.strides[k][dd] = it->strides[k][dd];
  }
  for (int dd = 0; dd < it->ndim; dd++) e.shape[dd] = it->shape[dd];
  int32_t flags = 0;
  KD_CUDA_TRY(kd_cuda->elementwise(dev.index, &e, &flags));
  if (flags & KD_EW_FLAG_ZERO_DIV) return kd_error(KD_ERR_INVALID_ARGUMENT, "ZeroDivisionError");
  return KD_OK;
}

/* kd.backends.cuda.matmul.allowTF32 (default false, as PyTorch): float32 products may use
 * TF32 tensor cores. Process-wide, read at each launch. */
static int kd_cuda_allow_tf32_flag;
void kd_cuda_set_allow_tf32(bool on) { __atomic_store_n(&kd_cuda_allow_tf32_flag, on ? 1 : 0, __ATOMIC_RELAXED); }
bool kd_cuda_get_allow_tf32(void) { return __atomic_load_n(&kd_cuda_allow_tf32_flag, __ATOMIC_RELAXED) != 0; }

/* Matrix products (matmul.c's device hook): one cuBLAS strided-batched gemm. */
static kd_status kd_cuda_mm_launch(kd_device dev, kd_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                                   const char *a, int64_t a_bs, int64_t a_rs, int64_t a_cs, const char *b, int64_t b_bs,
                                   int64_t b_rs, int64_t b_cs, char *c) {
  kd_cuda_gemm g;
  memset(&g, 0, sizeof g);
  g.dtype = (int32_t)dt;
  g.allow_tf32 = kd_cuda_get_allow_tf32() ? 1 : 0;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a;
  g.a_bs = a_bs;
  g.a_rs = a_rs;
  g.a_cs = a_cs;
  g.b = b;
  g.b_bs = b_bs;
  g.b_rs = b_rs;
  g.b_cs = b_cs;
  g.c = c;
  KD_CUDA_TRY(kd_cuda->gemm(dev.index, &g));
  return KD_OK;
}

/* Reductions (reduce.c's device hook): kept and reduced dims of the input, the outputs. */
static kd_status kd_cuda_reduce_launch(const kd_dev_reduce *d) {
  const kd_tensor *in = d->in;
  kd_cuda_reduce r;
  memset(&r, 0, sizeof r);
  r.code = d->code;
  r.arg = d->arg;
  r.in_dtype = (int32_t)in->dtype;
  r.out_dtype = (int32_t)(d->out ? d->out->dtype : in->dtype);
  r.p = d->p;
  r.correction = d->correction;
  r.count = 1;
  for (int k = 0; k < in->ndim; k++) {
    if (d->reduced[k]) {
      r.red_sizes[r.nred] = in->sizes[k];
      r.red_strides[r.nred++] = in->strides[k];
      r.count *= in->sizes[k];
    } else {
      r.keep_sizes[r.nkeep] = in->sizes[k];
      r.keep_strides[r.nkeep++] = in->strides[k];
    }
  }
  if (d->arg && r.nred == 0) { /* a 0-d input: one reduced element */
    r.red_sizes[0] = 1;
    r.nred = 1;
  }
  r.onumel = kd_tensor_numel(d->out ? d->out : d->out2);
  r.in = (const char *)in->storage->data + in->offset * (int64_t)kd_dtype_size(in->dtype);
  r.out = d->out ? kd_tensor_data(d->out) : NULL;
  r.out2 = d->out2 ? kd_tensor_data(d->out2) : NULL;
  KD_CUDA_TRY(kd_cuda->reduce(kd_tensor_device(in).index, &r));
  return KD_OK;
}

/* Row ops (softmax.c, scan.c, norm.c): the numbering of KD_DEV_ROWS_* is the ABI's. */
static kd_status kd_cuda_rows_launch(const kd_dev_rows *d) {
  _Static_assert((int)KD_DEV_ROWS_SOFTMAX == (int)KD_CUDA_ROWS_SOFTMAX && (int)KD_DEV_ROWS_LOG_SOFTMAX == (int)KD_CUDA_ROWS_LOG_SOFTMAX &&
                     (int)KD_DEV_ROWS_CUMSUM == (int)KD_CUDA_ROWS_CUMSUM && (int)KD_DEV_ROWS_CUMPROD == (int)KD_CUDA_ROWS_CUMPROD &&
                     (int)KD_DEV_ROWS_LAYER_NORM == (int)KD_CUDA_ROWS_LAYER_NORM &&
                     (int)KD_DEV_ROWS_LAYER_NORM_BACKWARD == (int)KD_CUDA_ROWS_LAYER_NORM_BACKWARD,
                 "row op codes");
  kd_cuda_rows r;
  memset(&r, 0, sizeof r);
  r.op = d->op;
  r.dtype = (int32_t)d->dtype;
  r.outer = d->outer;
  r.len = d->len;
  r.inner = d->inner;
  r.eps = d->eps;
  r.x = d->x;
  r.g = d->g;
  r.w = d->w;
  r.b = d->b;
  r.y = d->y;
  r.mean = d->mean;
  r.rstd = d->rstd;
  KD_CUDA_TRY(kd_cuda->rows(d->dev.index, &r));
  return KD_OK;
}

/* Random draws (factory.c, dropout.c): the generator offset was taken by the CPU kernel (read
 * from the graph in a capture: Note [Random ops in CUDA graphs] in cuda/philox_state.cuh). */
static kd_status kd_cuda_random_launch(const kd_dev_random *d) {
  _Static_assert((int)KD_DEV_RANDOM_UNIFORM == (int)KD_CUDA_RANDOM_UNIFORM && (int)KD_DEV_RANDOM_NORMAL == (int)KD_CUDA_RANDOM_NORMAL &&
                     (int)KD_DEV_RANDOM_INT == (int)KD_CUDA_RANDOM_INT && (int)KD_DEV_RANDOM_DROPOUT == (int)KD_CUDA_RANDOM_DROPOUT,
                 "random kinds");
  kd_cuda_random r;
  memset(&r, 0, sizeof r);
  r.kind = d->kind;
  r.dtype = (int32_t)d->dtype;
  r.n = d->n;
  r.seed = d->seed;
  r.offset = d->offset;
  r.low = d->low;
  r.range = d->range;
  r.keep_below = d->keep_below;
  r.scale = d->scale;
  r.x = d->x;
  r.y = d->y;
  r.mask = d->mask;
  KD_CUDA_TRY(kd_cuda->random(d->dev.index, &r));
  return KD_OK;
}

/* Non-pointwise families (cpu/device_op.h's hook): indexing, optimizer steps. A kd_dev_op maps
 * one to one onto the library's kd_cuda_op (same kinds, same parameters); one-element operands
 * (kd_cpu_scalar_operand: host scalars or one device element) are flagged and resolved there. */
_Static_assert((int)KD_DEV_OP_IX_CHECK == (int)KD_CUDA_OP_IX_CHECK && (int)KD_DEV_OP_IX_GATHER == (int)KD_CUDA_OP_IX_GATHER &&
                   (int)KD_DEV_OP_IX_SCATTER == (int)KD_CUDA_OP_IX_SCATTER && (int)KD_DEV_OP_OPTIM == (int)KD_CUDA_OP_OPTIM,
               "kd_dev_op kinds must equal kd_cuda_op kinds");
_Static_assert((int)KD_DEV_OP_SORT == (int)KD_CUDA_OP_SORT && (int)KD_DEV_OP_UNIQUE == (int)KD_CUDA_OP_UNIQUE &&
                   (int)KD_DEV_OP_MEDIAN == (int)KD_CUDA_OP_MEDIAN && (int)KD_DEV_OP_CONV == (int)KD_CUDA_OP_CONV &&
                   (int)KD_DEV_OP_POOL == (int)KD_CUDA_OP_POOL && (int)KD_DEV_POOL_MAX == (int)KD_CUDA_POOL_MAX &&
                   (int)KD_DEV_OP_SCAN == (int)KD_CUDA_OP_SCAN &&
                   (int)KD_DEV_POOL_ADAPTIVE_AVG_BACKWARD == (int)KD_CUDA_POOL_ADAPTIVE_AVG_BACKWARD &&
                   (int)KD_DEV_CONV_BACKWARD_WEIGHT == (int)KD_CUDA_CONV_BACKWARD_WEIGHT,
               "kd_dev_op kinds 40..63 and codes must equal kd_cuda_op's");
static kd_status kd_cuda_dev_op(kd_device dev, kd_dev_op *d) {
  kd_cuda_op *o = (kd_cuda_op *)calloc(1, sizeof(kd_cuda_op));
  if (!o) return kd_error(KD_ERR_OOM, "out of host memory");
  o->kind = d->kind;
  o->code = d->code;
  o->dtype = (int32_t)d->dtype;
  for (int k = 0; k < 8; k++) o->i[k] = d->i[k];
  for (int k = 0; k < 12; k++) o->d[k] = d->d[k];
  kd_status st = KD_OK;
  if (d->it) {
    const kd_iter *it = d->it;
    if (it->nops > KD_CUDA_OP_MAX_OPS || it->ndim > KD_CUDA_MAX_DIMS) {
      free(o);
      return kd_error(KD_ERR_INTERNAL, "CUDA launch: %d operands, %d dims", it->nops, it->ndim);
    }
    o->nops = it->nops;
    o->ndim = it->ndim;
    o->numel = it->numel;
    for (int dd = 0; dd < it->ndim; dd++) o->shape[dd] = it->shape[dd];
    for (int k = 0; k < it->nops; k++) {
      o->data[k] = it->data[k];
      o->dtypes[k] = (int32_t)it->dtypes[k];
      if (d->ops[k].sizes == NULL && d->ops[k].ndim == 0) o->scalar_mask |= 1u << k;
      for (int dd = 0; dd < it->ndim; dd++) o->strides[k][dd] = it->strides[k][dd];
    }
  } else {
    o->nops = 1;
    o->numel = d->numel;
    o->data[0] = d->data;
    o->dtypes[0] = (int32_t)KD_DTYPE_I64;
  }
  /* checks with an error (d->fail) report at the next sync point: the record's address and the
   * check's number go to i[2], i[3] (the loss pass: i[4], i[5]); an index list into an empty dim
   * cannot be clamped into range: checked at once */
  if ((d->kind == KD_DEV_OP_IX_CHECK || d->kind == KD_DEV_OP_NLL_CHECK || d->kind == KD_DEV_OP_LOSS) && d->fail &&
      o->numel > 0 && !(d->kind == KD_DEV_OP_IX_CHECK && d->i[0] <= 0)) {
    const int at = d->kind == KD_DEV_OP_LOSS ? 4 : 2;
    (void)kd_cuda_deferred_begin(kd_cuda, dev.index, d->fail, d->fail_args, &o->i[at], &o->i[at + 1]);
  }
  kd_cuda_status cs = kd_cuda->op(dev.index, o);
  if (cs != KD_CUDA_OK) st = kd_cuda_fail(cs);
  d->result[0] = o->result[0];
  d->result[1] = o->result[1];
  free(o);
  return st;
}

/* ---- the CUDA kernel table (what `supports` says) ----
 * Device-capable CPU kernels: every op whose CPU slot holds one of these gets the same function
 * at KD_KEY_CUDA. An op absent here has no CUDA kernel (composites run on every device through
 * the ops they call) and fails with KD_ERR_NOT_SUPPORTED ("Could not run 'x' with arguments
 * from the 'CUDA' backend"); a dtype a CUDA kernel lacks fails the same way from the library. */
KD_KERNEL(kd_cpu_unary);
KD_KERNEL(kd_cpu_binary);
KD_KERNEL(kd_cpu_ternary);
KD_KERNEL(kd_cpu_where);
KD_KERNEL(kd_cpu_masked_fill);
KD_KERNEL(kd_cpu_binary_not);
KD_KERNEL(kd_cpu_mm);
KD_KERNEL(kd_cpu_bmm);
KD_KERNEL(kd_cpu_addmm);
KD_KERNEL(kd_cpu_reduce);
KD_KERNEL(kd_cpu_arg_reduce);
KD_KERNEL(kd_cpu_softmax);
KD_KERNEL(kd_cpu_scan);
KD_KERNEL(kd_cpu_layer_norm);
KD_KERNEL(kd_cpu_layer_norm_backward);
KD_KERNEL(kd_cpu_random);
KD_KERNEL(kd_cpu_native_dropout);

KD_KERNEL(kd_cpu_gather);
KD_KERNEL(kd_cpu_scatter);
KD_KERNEL(kd_cpu_nonzero);
KD_KERNEL(kd_cpu_optim);
KD_KERNEL(kd_cpu_amp);
_Static_assert((int)KD_DEV_OP_AMP == (int)KD_CUDA_OP_AMP, "kd_dev_op kind AMP must equal kd_cuda_op's");
_Static_assert((int)KD_DEV_OP_TRI_INDICES == (int)KD_CUDA_OP_TRI_INDICES, "kd_dev_op kind TRI_INDICES must equal kd_cuda_op's");
KD_KERNEL(kd_cpu_tri_indices);
KD_KERNEL(kd_cpu_rnn_cell); /* the fused LSTM/GRU steps (kind 52: cuda/ops_rnn.cu) */
KD_KERNEL(kd_cpu_sdpa_flash); /* the fused attention and its gradients (kind 53: cuda/ops_attention.cu) */
KD_KERNEL(kd_cpu_sdpa_flash_backward);
_Static_assert((int)KD_DEV_OP_ATTENTION == (int)KD_CUDA_OP_ATTENTION, "kd_dev_op kind ATTENTION must equal kd_cuda_op's");
_Static_assert((int)KD_DEV_OP_RNN_CELL == (int)KD_CUDA_OP_RNN_CELL, "kd_dev_op kind RNN_CELL must equal kd_cuda_op's");
KD_KERNEL(kd_cpu_qlinear_dynamic); /* the int8 dynamic quantized linear layer (kind 54: cuda/ops_qlinear.cu) */
_Static_assert((int)KD_DEV_OP_QLINEAR == (int)KD_CUDA_OP_QLINEAR, "kd_dev_op kind QLINEAR must equal kd_cuda_op's");
KD_KERNEL(kd_cpu_linalg); /* kd.linalg (kinds 47..51: cuda/ops_linalg.cu) */
_Static_assert((int)KD_DEV_OP_LINALG_LU == (int)KD_CUDA_OP_LINALG_LU && (int)KD_DEV_OP_LINALG_CHOLESKY == (int)KD_CUDA_OP_LINALG_CHOLESKY &&
                   (int)KD_DEV_OP_LINALG_QR == (int)KD_CUDA_OP_LINALG_QR && (int)KD_DEV_OP_LINALG_SVD == (int)KD_CUDA_OP_LINALG_SVD &&
                   (int)KD_DEV_OP_LINALG_EIGH == (int)KD_CUDA_OP_LINALG_EIGH,
               "kd_dev_op linalg kinds must equal kd_cuda_op's");

/* sorting, convolution, pooling (device op kinds 40..63) */
KD_KERNEL(kd_cpu_sort);
KD_KERNEL(kd_cpu_unique);
KD_KERNEL(kd_cpu_median);
KD_KERNEL(kd_cpu_conv);
KD_KERNEL(kd_cpu_pool);

/* searching and counting (device op kinds 30..33: cuda/ops_search.cu) */
KD_KERNEL(kd_cpu_searchsorted);
KD_KERNEL(kd_cpu_histc);
KD_KERNEL(kd_cpu_bincount);
KD_KERNEL(kd_cpu_unique_consecutive);
KD_KERNEL(kd_cpu_select_rows);
_Static_assert((int)KD_DEV_OP_SEARCH == (int)KD_CUDA_OP_SEARCH && (int)KD_DEV_OP_HIST == (int)KD_CUDA_OP_HIST &&
                   (int)KD_DEV_OP_UNIQUE_CONSECUTIVE == (int)KD_CUDA_OP_UNIQUE_CONSECUTIVE &&
                   (int)KD_DEV_OP_SELECT == (int)KD_CUDA_OP_SELECT,
               "kd_dev_op search kinds must equal kd_cuda_op kinds");

/* Shape, factory, padding, embedding, loss and activation-backward kernels: copies through
 * copy_ (cat, flip), the indexing kinds (embedding) and the kinds of cuda/ops_shape.cu,
 * ops_pad.cu, ops_loss.cu (KD_DEV_OP_TRI .. KD_DEV_OP_NLL). */
KD_KERNEL(kd_cpu_cat);
KD_KERNEL(kd_cpu_flip);
KD_KERNEL(kd_cpu_tri);
KD_KERNEL(kd_cpu_arange);
KD_KERNEL(kd_cpu_linspace);
KD_KERNEL(kd_cpu_one_hot);
KD_KERNEL(kd_cpu_masked_select);
KD_KERNEL(kd_cpu_masked_select_backward);
KD_KERNEL(kd_cpu_pad);
KD_KERNEL(kd_cpu_interpolate);
KD_KERNEL(kd_cpu_embedding);
KD_KERNEL(kd_cpu_embedding_backward);
KD_KERNEL(kd_cpu_nll_loss);
KD_KERNEL(kd_cpu_nll_loss_backward);
KD_KERNEL(kd_cpu_ctc_loss);
KD_KERNEL(kd_cpu_ctc_loss_backward);
KD_KERNEL(kd_cpu_grid_sample);
KD_KERNEL(kd_cpu_pointwise_loss);
KD_KERNEL(kd_cpu_pointwise_loss_backward);
KD_KERNEL(kd_cpu_act_backward);
KD_KERNEL(kd_cpu_reduce_backward);
KD_KERNEL(kd_cpu_special);
_Static_assert((int)KD_DEV_OP_TRI == (int)KD_CUDA_OP_TRI && (int)KD_DEV_OP_ARANGE == (int)KD_CUDA_OP_ARANGE &&
                   (int)KD_DEV_OP_ONE_HOT == (int)KD_CUDA_OP_ONE_HOT && (int)KD_DEV_OP_MASKED == (int)KD_CUDA_OP_MASKED &&
                   (int)KD_DEV_OP_ACT_BACKWARD == (int)KD_CUDA_OP_ACT_BACKWARD &&
                   (int)KD_DEV_OP_PROD_BACKWARD == (int)KD_CUDA_OP_PROD_BACKWARD && (int)KD_DEV_OP_PAD == (int)KD_CUDA_OP_PAD &&
                   (int)KD_DEV_OP_INTERP == (int)KD_CUDA_OP_INTERP && (int)KD_DEV_OP_LOSS == (int)KD_CUDA_OP_LOSS &&
                   (int)KD_DEV_OP_NLL_CHECK == (int)KD_CUDA_OP_NLL_CHECK && (int)KD_DEV_OP_NLL == (int)KD_CUDA_OP_NLL,
               "kd_dev_op shape/loss kinds must equal kd_cuda_op kinds");
_Static_assert((int)KD_DEV_OP_RANDOM_DIST == (int)KD_CUDA_OP_RANDOM_DIST &&
                   (int)KD_DEV_OP_MULTINOMIAL == (int)KD_CUDA_OP_MULTINOMIAL,
               "kd_dev_op random kinds must equal kd_cuda_op kinds");
_Static_assert((int)KD_DEV_OP_CTC == (int)KD_CUDA_OP_CTC, "kd_dev_op CTC kind must equal kd_cuda_op's");
_Static_assert((int)KD_DEV_OP_GRID_SAMPLE == (int)KD_CUDA_OP_GRID_SAMPLE, "kd_dev_op grid sample kind must equal kd_cuda_op's");

static const kd_kernel_fn kd_cuda_shared_kernels[] = {
    kd_cpu_unary, kd_cpu_binary,     kd_cpu_ternary, kd_cpu_where, kd_cpu_masked_fill,
    kd_cpu_binary_not, kd_cpu_mm, kd_cpu_bmm, kd_cpu_addmm,
    /* ABI 4: reductions, row ops, random */
    kd_cpu_reduce, kd_cpu_arg_reduce, kd_cpu_softmax, kd_cpu_scan, kd_cpu_layer_norm, kd_cpu_layer_norm_backward,
    kd_cpu_random, kd_cpu_native_dropout,

    /* cpu/device_op.h's hook (kd_cuda_dev_op) */
    kd_cpu_gather, kd_cpu_scatter, kd_cpu_nonzero, kd_cpu_optim, kd_cpu_amp, kd_cpu_linalg,

    /* ---- sorting, convolution, pooling (device op kinds 40..63: cuda/ops_sort.cu, ops_conv.cu, ops_pool.cu) ---- */
    kd_cpu_sort, kd_cpu_unique, kd_cpu_median, kd_cpu_conv, kd_cpu_pool,

    /* searching and counting (device op kinds 30..33: cuda/ops_search.cu) */
    kd_cpu_searchsorted, kd_cpu_histc, kd_cpu_bincount, kd_cpu_unique_consecutive, kd_cpu_select_rows,

    /* shape, factory, padding, embedding, loss and activation-backward kernels (kinds 16..26) */
    kd_cpu_cat, kd_cpu_flip, kd_cpu_tri, kd_cpu_arange, kd_cpu_linspace, kd_cpu_one_hot, kd_cpu_masked_select,
    kd_cpu_masked_select_backward, kd_cpu_pad, kd_cpu_interpolate, kd_cpu_embedding, kd_cpu_embedding_backward,
    kd_cpu_nll_loss, kd_cpu_nll_loss_backward, kd_cpu_pointwise_loss, kd_cpu_pointwise_loss_backward,
    kd_cpu_act_backward, kd_cpu_reduce_backward,
    /* the CTC loss (kind 29: cuda/ops_ctc.cu) */
    kd_cpu_ctc_loss, kd_cpu_ctc_loss_backward,
    /* gridSample (kind 53: cuda/ops_grid_sample.cu) */
    kd_cpu_grid_sample,

    /* special functions (pointwise family KD_EW_SPECIAL: cuda/ops_special.cu) */
    kd_cpu_special,
    /* trilIndices/triuIndices (kind 37: cuda/ops_shape_construct.cu) */
    kd_cpu_tri_indices,
    /* the fused LSTM/GRU steps (kind 52: cuda/ops_rnn.cu) */
    kd_cpu_rnn_cell,
    /* the int8 dynamic quantized linear layer (kind 54: cuda/ops_qlinear.cu) */
    kd_cpu_qlinear_dynamic,
    /* the fused attention (kind 55: cuda/ops_attention.cu) */
    kd_cpu_sdpa_flash, kd_cpu_sdpa_flash_backward,
};

static void kd_cuda_register_kernels(void) {
  kd_dispatch_register(KD_OP_copy_, KD_KEY_CUDA, kd_cuda_copy_);
  kd_dispatch_register(KD_OP_fill_, KD_KEY_CUDA, kd_cuda_fill_);
  kd_cpu_device_ew = kd_cuda_ew_launch;
  kd_cpu_device_mm = kd_cuda_mm_launch;
  kd_cpu_device_reduce = kd_cuda_reduce_launch;
  kd_cpu_device_rows = kd_cuda_rows_launch;
  kd_cpu_device_random = kd_cuda_random_launch;

  kd_cpu_device_op = kd_cuda_dev_op;
  for (int op = 0; op < KD_OP_COUNT; op++) {
    kd_kernel_fn cpu = kd_kernel_table[op][KD_KEY_CPU];
    if (!cpu || kd_kernel_table[op][KD_KEY_CUDA]) continue;
    for (size_t i = 0; i < sizeof kd_cuda_shared_kernels / sizeof kd_cuda_shared_kernels[0]; i++)
      if (cpu == kd_cuda_shared_kernels[i]) kd_dispatch_register((kd_op_id)op, KD_KEY_CUDA, cpu);
  }
}

/* ---- loading (Note [CUDA loading]) ---- */

/* KINDLING_CUDA=emulate selects the emulated GPU (cuda/emulator): the same CUDA sources built
 * for the CPU by `npm run build:emulator`. */
static bool kd_cuda_emulated(void) {
  const char *v = getenv("KINDLING_CUDA");
  return v && strcmp(v, "emulate") == 0;
}
static const char *kd_cuda_library_name(void) {
  return kd_cuda_emulated() ? "libkindling_cuda_emu.so" : "libkindling_cuda.so";
}

/* Directories searched after the addon's own (kd_cuda_add_library_dir): the optional package
 * kindling-cuda-linux-x64, and build/Release when the addon loaded is a prebuilt one. */
#define KD_CUDA_MAX_LIBRARY_DIRS 4
static char kd_cuda_library_dirs[KD_CUDA_MAX_LIBRARY_DIRS][4096];
static int kd_cuda_library_dir_count;

kd_status kd_cuda_add_library_dir(const char *dir) {
  if (kd_cuda_library_dir_count == KD_CUDA_MAX_LIBRARY_DIRS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "at most %d CUDA library directories can be added", KD_CUDA_MAX_LIBRARY_DIRS);
  if (strlen(dir) >= sizeof kd_cuda_library_dirs[0])
    return kd_error(KD_ERR_INVALID_ARGUMENT, "CUDA library directory path is too long (%zu bytes)", strlen(dir));
  snprintf(kd_cuda_library_dirs[kd_cuda_library_dir_count++], sizeof kd_cuda_library_dirs[0], "%s", dir);
  return KD_OK;
}

/* Path of the library: $KINDLING_CUDA_LIBRARY, else the first of (the directory of the module
 * holding this code, the added directories) that holds it, else the path next to the module.
 * looked: the directories searched, for the reason. */
static bool kd_cuda_library_path(char *buf, size_t n, bool *from_env, char *looked, size_t ln) {
  const char *env = getenv("KINDLING_CUDA_LIBRARY");
  *from_env = env && *env;
  if (*from_env) {
    snprintf(buf, n, "%s", env);
    snprintf(looked, ln, "%s", env);
    return true;
  }
  Dl_info info;
  memset(&info, 0, sizeof info);
  if (!dladdr((void *)&kd_cuda_bridge_load, &info) || !info.dli_fname) return false;
  const char *slash = strrchr(info.dli_fname, '/');
  char own[4096];
  if (slash) snprintf(own, sizeof own, "%.*s", (int)(slash - info.dli_fname), info.dli_fname);
  else snprintf(own, sizeof own, ".");
  snprintf(buf, n, "%s/%s", own, kd_cuda_library_name());
  snprintf(looked, ln, "%s", own);
  if (access(buf, F_OK) == 0) return true;
  for (int i = 0; i < kd_cuda_library_dir_count; i++) {
    char candidate[4096 + 32];
    snprintf(candidate, sizeof candidate, "%s/%s", kd_cuda_library_dirs[i], kd_cuda_library_name());
    size_t used = strlen(looked);
    snprintf(looked + used, ln - used, ", %s", kd_cuda_library_dirs[i]);
    if (access(candidate, F_OK) == 0) {
      snprintf(buf, n, "%s", candidate);
      return true;
    }
  }
  return true;
}

bool kd_cuda_library_found(void) {
  char looked[8192], path[4096 + 32];
  bool from_env = false;
  return kd_cuda_library_path(path, sizeof path, &from_env, looked, sizeof looked) && access(path, F_OK) == 0;
}

/* dlopen's message when a library libkindling_cuda.so links is missing names it ("libcublas.so.13:
 * cannot open shared object file"); the reason says where that library comes from, for the CUDA
 * major version in its soname. */
static void kd_cuda_set_dlopen_reason(const char *path, const char *err) {
  static const char *const runtime_libs[] = {"libcublasLt", "libcublas", "libcusolver", "libcusparse", "libnvJitLink"};
  for (size_t i = 0; err && strstr(err, "cannot open shared object file") && i < sizeof runtime_libs / sizeof runtime_libs[0]; i++) {
    const char *at = strstr(err, runtime_libs[i]);
    if (!at) continue;
    int len = (int)strcspn(at, ": ");
    const char *so = strstr(at, ".so.");
    int major = so && so - at < len ? atoi(so + 4) : 0;
    char cuda[32] = "CUDA", wheel[16] = "<major>";
    if (major > 0) {
      snprintf(cuda, sizeof cuda, "CUDA %d", major);
      snprintf(wheel, sizeof wheel, "%d", major);
    }
    kd_cuda_set_reason("%.*s, a %s runtime library that %s needs, is not installed or not on the library path: "
                       "install the %s runtime libraries (NVIDIA's cuda-libraries-<version> package, or the pip wheels "
                       "nvidia-cublas-cu%s and nvidia-cusolver-cu%s with their lib/ folders on LD_LIBRARY_PATH) (%s)",
                       len, at, cuda, path, cuda, wheel, wheel, err);
    return;
  }
  kd_cuda_set_reason("could not load %s: %s", path, err ? err : "unknown dlopen error");
}

static void kd_cuda_do_load(void) {
  char looked[8192], path[4096 + 32];
  bool from_env = false;
  if (!kd_cuda_library_path(path, sizeof path, &from_env, looked, sizeof looked)) {
    kd_cuda_set_reason("libkindling_cuda.so not found (could not locate kindling.node to look next to it; "
                       "set KINDLING_CUDA_LIBRARY to its path)");
    return;
  }
  if (access(path, F_OK) != 0) {
    if (from_env)
      kd_cuda_set_reason("libkindling_cuda.so not found at KINDLING_CUDA_LIBRARY=%s", path);
    else if (kd_cuda_emulated())
      kd_cuda_set_reason("KINDLING_CUDA=emulate, but the emulated GPU is not built (run `npm run build:emulator`; "
                         "looked in %s)", looked);
    else
      kd_cuda_set_reason("libkindling_cuda.so not found: install the optional package kindling-cuda-linux-x64 "
                         "(npm install kindling-cuda-linux-x64) or build kindling with nvcc (looked in %s)", looked);
    return;
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    kd_cuda_set_dlopen_reason(path, dlerror());
    return;
  }
  void *sym = dlsym(h, KD_CUDA_GET_API_SYMBOL);
  if (!sym) {
    kd_cuda_set_reason("%s is not a kindling CUDA library (it has no %s)", path, KD_CUDA_GET_API_SYMBOL);
    return;
  }
  kd_cuda_get_api_fn get_api;
  memcpy(&get_api, &sym, sizeof get_api); /* object pointer -> function pointer, as POSIX allows */
  const kd_cuda_api *api = get_api(KD_CUDA_ABI_VERSION);
  if (!api || api->abi_version != KD_CUDA_ABI_VERSION || api->struct_size < sizeof(kd_cuda_api)) {
    kd_cuda_set_reason("%s was built for another version of kindling (it does not provide CUDA ABI version %d); "
                       "rebuild with `node tools/build.js`",
                       path, KD_CUDA_ABI_VERSION);
    return;
  }
  kd_cuda_status s = api->init();
  if (s != KD_CUDA_OK) {
    const char *m = api->last_error();
    kd_cuda_set_reason("%s", m && *m ? m : api->status_name(s));
    return;
  }
  kd_cuda = api;
  kd_cuda_reason[0] = 0;
  void *stats = dlsym(h, KD_CUDA_EMU_STATS_SYMBOL);
  if (stats) memcpy(&kd_cuda_emu_stats_get, &stats, sizeof kd_cuda_emu_stats_get);
  kd_device_backend_register(KD_DEVICE_CUDA, &kd_cuda_backend);
  kd_cuda_wrap_cpu_backend();
  kd_dispatch_register(KD_OP_copy_, KD_KEY_CUDA, kd_cuda_copy_);
  kd_dispatch_register(KD_OP_fill_, KD_KEY_CUDA, kd_cuda_fill_);

  kd_cuda_register_kernels();
}

kd_status kd_cuda_bridge_load(void) {
  pthread_once(&kd_cuda_once, kd_cuda_do_load);
  if (kd_cuda) return KD_OK;
  return kd_error(KD_ERR_CUDA_UNAVAILABLE, "CUDA is not available: %s", kd_cuda_reason);
}

bool kd_cuda_emulator_stats(kd_cuda_emu_stats *out) {
  pthread_once(&kd_cuda_once, kd_cuda_do_load);
  return kd_cuda && kd_cuda_emu_stats_get && kd_cuda_emu_stats_get(out) == 0;
}

bool kd_cuda_is_available(void) {
  pthread_once(&kd_cuda_once, kd_cuda_do_load);
  return kd_cuda != NULL;
}

const char *kd_cuda_unavailable_reason(void) { return kd_cuda_reason; }

/* ---- device queries ---- */

kd_status kd_cuda_current_device(int *out) {
  *out = 0;
  KD_TRY(kd_cuda_bridge_load());
  KD_CUDA_TRY(kd_cuda->current_device(out));
  return KD_OK;
}

kd_status kd_cuda_set_device(int index) {
  KD_TRY(kd_cuda_bridge_load());
  KD_CUDA_TRY(kd_cuda->set_device(index));
  return KD_OK;
}

kd_status kd_cuda_get_properties(int index, kd_cuda_properties *out) {
  memset(out, 0, sizeof *out);
  KD_TRY(kd_cuda_bridge_load());
  kd_cuda_device_props p;
  KD_CUDA_TRY(kd_cuda->device_properties(index, &p));
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->total_memory = p.total_memory;
  out->major = p.major;
  out->minor = p.minor;
  out->multiprocessor_count = p.multiprocessor_count;
  return KD_OK;
}

/* ---- streams, events, memory, pinned memory ---- */

kd_status kd_cuda_api_get(const struct kd_cuda_api **out) {
  *out = NULL;
  KD_TRY(kd_cuda_bridge_load());
  *out = kd_cuda;
  return KD_OK;
}

kd_status kd_cuda_status_error(int cuda_status) { return kd_cuda_fail((kd_cuda_status)cuda_status); }

kd_status kd_cuda_contiguous(kd_tensor *t, kd_tensor **out) {
  KD_TRY(kd_cuda_bridge_load());
  if (kd_tensor_is_contiguous(t)) {
    kd_tensor_retain(t);
    *out = t;
    return KD_OK;
  }
  return kd_cuda_contiguous_on_same_device(t, out);
}

kd_status kd_cuda_pin_memory(kd_tensor *t, kd_tensor **out) {
  KD_TRY(kd_cuda_bridge_load());
  if (kd_tensor_device(t).type != KD_DEVICE_CPU)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot pin '%s' memory: only dense CPU tensors can be pinned",
                    "cuda");
  if (kd_cuda_is_pinned(t)) {
    kd_tensor_retain(t);
    *out = t;
    return KD_OK;
  }
  kd_tensor *p;
  kd_storage_set_pinning(true);
  kd_status st = kd_tensor_empty(t->sizes, t->ndim, t->dtype, kd_device_cpu(), &p);
  kd_storage_set_pinning(false);
  KD_TRY(st);
  if (kd_tensor_numel(t) > 0 && (st = kd_cuda_cpu_copy(p, t)) != KD_OK) {
    kd_tensor_release(p);
    return st;
  }
  *out = p;
  return KD_OK;
}

bool kd_cuda_is_pinned(const kd_tensor *t) {
  if (!kd_cuda_is_available() || kd_tensor_device(t).type != KD_DEVICE_CPU || !t->storage->data) return false;
  return kd_cuda->host_owns(t->storage->data) != 0;
}
