/* api.c - the function table C extensions are given (include/kindling.h) and the kernel that runs
 * their C kernels: an ordinary kd_kernel_fn of the runtime op registry (dispatch/op_registry.h)
 * whose kernel data is the extension's function. The public enums of kindling.h are kindling's own
 * values (checked below), so nothing is translated. */
#include "extension/api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/kindling.h"
#include "autograd/autograd.h"
#include "cuda_bridge/bridge.h"
#include "dispatch/op_registry.h"
#include "../../cuda/kd_cuda_api.h"

_Static_assert(KD_BOOL == (int)KD_DTYPE_BOOL && KD_INT64 == (int)KD_DTYPE_I64, "kindling.h dtypes");
_Static_assert(KD_ERROR_NOT_SUPPORTED == (int)KD_ERR_NOT_SUPPORTED && KD_ERROR_DTYPE == (int)KD_ERR_DTYPE, "kindling.h statuses");
_Static_assert(KD_DEVICE_TYPE_CUDA == (int)KD_DEVICE_CUDA, "kindling.h device types");

struct kd_op_call {
  const kd_op_info *op;
  kd_value *args;
  kd_value *outs;
  kd_device device;
};

static _Thread_local int kd_ext_last_status;

static int kd_ext_fail(kd_status st) {
  kd_ext_last_status = (int)st;
  return (int)st;
}

static int kd_ext_ndim(const kd_tensor *t) { return t->ndim; }
static const int64_t *kd_ext_sizes(const kd_tensor *t) { return t->sizes; }
static const int64_t *kd_ext_strides(const kd_tensor *t) { return t->strides; }
static int64_t kd_ext_numel(const kd_tensor *t) { return kd_tensor_numel(t); }
static int kd_ext_dtype(const kd_tensor *t) { return (int)t->dtype; }
static int kd_ext_device_type(const kd_tensor *t) { return kd_tensor_device(t).type; }
static int kd_ext_device_index(const kd_tensor *t) { return kd_tensor_device(t).index; }
static int kd_ext_is_contiguous(const kd_tensor *t) { return kd_tensor_is_contiguous(t); }
static void *kd_ext_data(const kd_tensor *t) { return kd_tensor_data(t); }

static int kd_ext_nargs(const kd_op_call *c) { return c->op->nargs; }
static kd_value *kd_ext_arg(kd_op_call *c, int i) { return i >= 0 && i < c->op->nargs ? &c->args[i] : NULL; }
static kd_tensor *kd_ext_arg_tensor(kd_op_call *c, int i) {
  kd_value *v = kd_ext_arg(c, i);
  return v && v->kind == KD_VALUE_TENSOR ? v->v.t : NULL;
}
static double kd_ext_arg_double(kd_op_call *c, int i) {
  kd_value *v = kd_ext_arg(c, i);
  if (!v) return 0;
  if (v->kind == KD_VALUE_DOUBLE) return v->v.d;
  if (v->kind == KD_VALUE_INT) return (double)v->v.i;
  if (v->kind == KD_VALUE_SCALAR) return kd_scalar_to_double(v->v.s);
  return 0;
}
static int64_t kd_ext_arg_int(kd_op_call *c, int i) {
  kd_value *v = kd_ext_arg(c, i);
  if (!v) return 0;
  if (v->kind == KD_VALUE_INT) return v->v.i;
  if (v->kind == KD_VALUE_BOOL) return v->v.b;
  if (v->kind == KD_VALUE_SCALAR && v->v.s.kind != KD_KIND_FLOAT) return kd_scalar_to_int(v->v.s);
  /* a float: truncated, saturated at the int64 range (NaN is 0), never the undefined cast */
  const double d = kd_ext_arg_double(c, i);
  if (!(d == d)) return 0;
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}
static int kd_ext_arg_bool(kd_op_call *c, int i) {
  kd_value *v = kd_ext_arg(c, i);
  return v && v->kind == KD_VALUE_BOOL ? v->v.b : kd_ext_arg_int(c, i) != 0;
}

static kd_tensor *kd_ext_new_output(kd_op_call *c, int i, const int64_t *sizes, int ndim, int dtype) {
  int n = c->op->nouts < 0 ? 1 : c->op->nouts;
  if (i < 0 || i >= n || c->op->nouts < 0) {
    kd_ext_fail(kd_error(KD_ERR_INVALID_ARGUMENT, "'%s': no output %d (its schema returns %d tensors)", c->op->name, i, c->op->nouts));
    return NULL;
  }
  if (dtype < 0 || dtype >= KD_DTYPE_COUNT || ndim < 0 || ndim > KD_MAX_DIMS) {
    kd_ext_fail(kd_error(KD_ERR_INVALID_ARGUMENT, "'%s': new_output with a bad dtype or ndim", c->op->name));
    return NULL;
  }
  kd_tensor *t = NULL;
  kd_status st = kd_tensor_empty(sizes, ndim, (kd_dtype)dtype, c->device, &t);
  if (st != KD_OK) {
    kd_ext_fail(st);
    return NULL;
  }
  kd_value_release(&c->outs[i]);
  c->outs[i] = kd_value_tensor(t);
  return t;
}

static uintptr_t kd_ext_cuda_stream(kd_op_call *c) {
  if (c->device.type != KD_DEVICE_CUDA) return 0;
  const struct kd_cuda_api *api = NULL;
  uintptr_t s = 0;
  if (kd_cuda_api_get(&api) != KD_OK || api->current_stream(c->device.index, &s) != 0) return 0;
  return s;
}

static int kd_ext_error(int status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (status <= 0 || status >= KD_STATUS_COUNT) status = KD_ERR_INVALID_ARGUMENT;
  return kd_ext_fail(kd_error((kd_status)status, "%s", msg));
}

static int kd_ext_last(void) { return kd_ext_last_status; }

/* Runs fn with the call's device current (as PyTorch's device guard around a CUDA kernel), so
 * that the extension's launches, its stream 0 (the device's legacy stream) and its runtime
 * calls are of that device; the thread's current device is restored after. */
static int kd_ext_run_on_device(kd_kernel fn, kd_op_call *c) {
  if (c->device.type != KD_DEVICE_CUDA) return fn(c);
  int prev = 0;
  kd_status st = kd_cuda_current_device(&prev);
  if (st == KD_OK && prev != c->device.index) st = kd_cuda_set_device(c->device.index);
  if (st != KD_OK) return st;
  int out = fn(c);
  if (prev != c->device.index) {
    kd_status restored = kd_cuda_set_device(prev);
    if (out == KD_SUCCESS && restored != KD_OK) out = restored;
  }
  return out;
}

/* Runs an extension's kernel (the kernel data of the running key). */
static kd_status kd_ext_kernel_run(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  kd_kernel fn = (kd_kernel)kd_op_kernel_data(op->id, kd_keyset_highest(ks));
  if (!fn) return kd_error(KD_ERR_INTERNAL, "no C kernel for '%s'", op->name);
  kd_op_call c = {op, args, outs, kd_device_cpu()};
  c.device.type = kd_keyset_highest(ks & KD_KEYSET_BACKENDS) == KD_KEY_CUDA ? KD_DEVICE_CUDA : KD_DEVICE_CPU;
  for (int i = 0; i < op->nargs; i++)
    if (args[i].kind == KD_VALUE_TENSOR) { c.device = kd_tensor_device(args[i].v.t); break; }
  int st = kd_ext_run_on_device(fn, &c);
  int n = op->nouts < 0 ? 0 : op->nouts;
  for (int i = 0; i < n && st == KD_SUCCESS; i++)
    if (outs[i].kind != KD_VALUE_TENSOR)
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "the C kernel of '%s' made no output %d (call new_output)", op->name, i);
  if (st != KD_SUCCESS) {
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
    if (st < 0 || st >= KD_STATUS_COUNT) return kd_error(KD_ERR_INVALID_ARGUMENT, "the C kernel of '%s' failed (status %d)", op->name, st);
    return (kd_status)st;
  }
  return KD_OK;
}

/* The ops defined by the extension being loaded (kd_extension_load). */
static _Thread_local int *kd_ext_defined;
static _Thread_local int kd_ext_ndefined, kd_ext_cap;

static int kd_ext_define(const char *schema, int *op) {
  kd_status st = kd_runtime_op_define(schema, op);
  if (st != KD_OK) return kd_ext_fail(st);
  if (kd_ext_ndefined == kd_ext_cap) {
    int cap = kd_ext_cap ? kd_ext_cap * 2 : 8;
    int *bigger = (int *)realloc(kd_ext_defined, sizeof(int) * (size_t)cap);
    if (!bigger) return kd_ext_fail(kd_error(KD_ERR_OOM, "out of memory"));
    kd_ext_defined = bigger;
    kd_ext_cap = cap;
  }
  kd_ext_defined[kd_ext_ndefined++] = *op;
  return KD_SUCCESS;
}

static int kd_ext_impl(int op, int device_type, kd_kernel fn) {
  if (!fn || (device_type != KD_DEVICE_TYPE_CPU && device_type != KD_DEVICE_TYPE_CUDA))
    return kd_ext_fail(kd_error(KD_ERR_INVALID_ARGUMENT, "impl: a kernel and KD_DEVICE_TYPE_CPU or KD_DEVICE_TYPE_CUDA"));
  kd_key key = device_type == KD_DEVICE_TYPE_CUDA ? KD_KEY_CUDA : KD_KEY_CPU;
  kd_status st = kd_op_set_kernel(op, key, kd_ext_kernel_run, (void *)fn, NULL, false);
  return st == KD_OK ? KD_SUCCESS : kd_ext_fail(st);
}

static int kd_ext_set_backward(int op, int backward_op) {
  kd_status st = kd_op_set_backward(op, backward_op);
  return st == KD_OK ? KD_SUCCESS : kd_ext_fail(st);
}

static const kindling_api kd_ext_api = {
    KINDLING_EXTENSION_ABI,
    kd_ext_ndim, kd_ext_sizes, kd_ext_strides, kd_ext_numel, kd_ext_dtype, kd_ext_device_type, kd_ext_device_index,
    kd_ext_is_contiguous, kd_ext_data,
    kd_ext_nargs, kd_ext_arg_tensor, kd_ext_arg_double, kd_ext_arg_int, kd_ext_arg_bool, kd_ext_new_output,
    kd_ext_cuda_stream,
    kd_ext_error, kd_ext_last,
    kd_ext_define, kd_ext_impl, kd_ext_set_backward,
};

kd_status kd_extension_init(kd_extension_init_fn init, const char *path, int **ops, int *nops) {
  kd_ext_ndefined = 0;
  kd_ext_last_status = KD_OK;
  int r = init(&kd_ext_api);
  *ops = kd_ext_defined;
  *nops = kd_ext_ndefined;
  kd_ext_defined = NULL;
  kd_ext_ndefined = kd_ext_cap = 0;
  if (r != 0) {
    if (kd_ext_last_status != KD_OK) return (kd_status)kd_ext_last_status; /* its message is set */
    return kd_error(KD_ERR_INVALID_ARGUMENT, "kindling_extension_init of '%s' returned %d", path, r);
  }
  return KD_OK;
}
