/* kindling.h - the C API of kindling extensions: ops written in C, compiled and loaded at run time
 * by kd.utils.cppExtension.load({ name, sources, extraCflags }) (docs/EXTENDING.md), that join
 * kindling's dispatcher like its own ops (the registry of kd.library).
 *
 * An extension is a shared object that defines one function, kindling_extension_init, called once
 * when it is loaded with the function table below. There it defines its ops from PyTorch schemas
 * and registers a C kernel per device type:
 *
 *   #include <kindling.h>
 *   static const kindling_api *kd;
 *   static int scale_cpu(kd_op_call *c) {
 *     kd_tensor *x = kd->arg_tensor(c, 0);
 *     double alpha = kd->arg_double(c, 1);
 *     if (kd->dtype(x) != KD_FLOAT32 || !kd->is_contiguous(x))
 *       return kd->error(KD_ERROR_DTYPE, "scale: expected a contiguous float32 tensor");
 *     kd_tensor *y = kd->new_output(c, 0, kd->sizes(x), kd->ndim(x), KD_FLOAT32);
 *     if (!y) return kd->last_status();
 *     const float *in = kd->data(x); float *out = kd->data(y);
 *     for (int64_t i = 0; i < kd->numel(x); i++) out[i] = (float)(alpha * in[i]);
 *     return KD_SUCCESS;
 *   }
 *   int kindling_extension_init(const kindling_api *api) {
 *     if (api->abi_version < KINDLING_EXTENSION_ABI) return -1;
 *     kd = api;
 *     int op;
 *     if (kd->define("mylib::scale(Tensor x, float alpha=1.0) -> Tensor", &op)) return -1;
 *     return kd->impl(op, KD_DEVICE_TYPE_CPU, scale_cpu);
 *   }
 *
 * Kernels run on the thread that called the op, with arguments already checked against the schema
 * (defaults filled in, all tensors on one device). Tensors given to a kernel are borrowed; outputs
 * are made with new_output and belong to the call. A kernel returns KD_SUCCESS or the status of
 * kd->error(...), which becomes a JS KindlingError with that code and message. Autograd: a second
 * op computing the input gradients, named with set_backward (or a JS backward registered with
 * kd.library.registerAutograd). */
#ifndef KINDLING_H
#define KINDLING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINDLING_EXTENSION_ABI 1

typedef struct kd_tensor kd_tensor; /* a kindling tensor (opaque) */
typedef struct kd_op_call kd_op_call;     /* one call of an op: its arguments and outputs (opaque) */

/* Element types (the values of kindling's dtypes). */
enum {
  KD_FLOAT32 = 0, KD_FLOAT64, KD_FLOAT16, KD_BFLOAT16, KD_INT8, KD_UINT8, KD_INT16, KD_INT32, KD_INT64, KD_BOOL
};
/* Device types. */
enum { KD_DEVICE_TYPE_CPU = 0, KD_DEVICE_TYPE_CUDA = 1 };
/* Statuses: the codes JS sees (KD_INVALID_ARGUMENT, KD_SHAPE_MISMATCH, ...). */
enum {
  KD_SUCCESS = 0, KD_ERROR_INVALID_ARGUMENT, KD_ERROR_TYPE, KD_ERROR_SHAPE, KD_ERROR_DTYPE, KD_ERROR_DEVICE,
  KD_ERROR_INDEX, KD_ERROR_OOM, KD_ERROR_DISPOSED, KD_ERROR_NOT_SUPPORTED
};

/* A kernel: reads its arguments, writes its outputs, returns a status. */
typedef int (*kd_kernel)(kd_op_call *call);

typedef struct kindling_api {
  int abi_version;                                    /* >= KINDLING_EXTENSION_ABI */

  /* ---- tensors (sizes and strides in elements; data points at the first element) ---- */
  int (*ndim)(const kd_tensor *t);
  const int64_t *(*sizes)(const kd_tensor *t);
  const int64_t *(*strides)(const kd_tensor *t);
  int64_t (*numel)(const kd_tensor *t);
  int (*dtype)(const kd_tensor *t);
  int (*device_type)(const kd_tensor *t);
  int (*device_index)(const kd_tensor *t);
  int (*is_contiguous)(const kd_tensor *t);
  void *(*data)(const kd_tensor *t);

  /* ---- a call: arguments in schema order, outputs by index ---- */
  int (*nargs)(const kd_op_call *c);
  kd_tensor *(*arg_tensor)(kd_op_call *c, int i);        /* NULL when argument i is no tensor (None) */
  double (*arg_double)(kd_op_call *c, int i);            /* float, int or Scalar arguments */
  int64_t (*arg_int)(kd_op_call *c, int i);             /* a float truncated, saturated at the int64 range */
  int (*arg_bool)(kd_op_call *c, int i);
  /* Makes output i: a contiguous tensor on the call's device. NULL on failure (see last_status). */
  kd_tensor *(*new_output)(kd_op_call *c, int i, const int64_t *sizes, int ndim, int dtype);
  /* The call's CUDA stream (a cudaStream_t) on CUDA, 0 on the CPU: enqueue work there. */
  uintptr_t (*cuda_stream)(kd_op_call *c);

  /* ---- errors ---- */
  int (*error)(int status, const char *fmt, ...);     /* sets the message; returns status */
  int (*last_status)(void);                           /* the status of the last failed API call */

  /* ---- registration (inside kindling_extension_init) ---- */
  int (*define)(const char *schema, int *op);         /* the op's id in *op */
  int (*impl)(int op, int device_type, kd_kernel fn);
  /* Makes backward_op the backward of op: it takes one gradient per output of op (contiguous),
   * then op's arguments, and returns one gradient per tensor argument of op. */
  int (*set_backward)(int op, int backward_op);
} kindling_api;

/* Defined by the extension; returns 0 on success. */
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int kindling_extension_init(const kindling_api *api);

#ifdef __cplusplus
}
#endif
#endif
