/* status.h - kindling's error model: every fallible C function returns a kd_status and
 * leaves a human-readable message in thread-local storage (kd_last_error()).
 * Nothing in the core aborts or exits on anything a user can cause; the Node-API layer
 * turns (status, message) into a JS error whose `code` is kd_status_code(status). */
#ifndef KD_STATUS_H
#define KD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_status {
  KD_OK = 0,
  KD_ERR_INVALID_ARGUMENT, /* KD_INVALID_ARGUMENT: a value outside what the op accepts   */
  KD_ERR_TYPE,             /* KD_INVALID_TYPE: wrong kind of JS value (thrown as TypeError) */
  KD_ERR_SHAPE,            /* KD_SHAPE_MISMATCH                                            */
  KD_ERR_DTYPE,            /* KD_DTYPE_MISMATCH                                            */
  KD_ERR_DEVICE,           /* KD_DEVICE_MISMATCH                                           */
  KD_ERR_INDEX,            /* KD_INDEX_OUT_OF_RANGE (thrown as RangeError)                 */
  KD_ERR_OOM,              /* KD_OUT_OF_MEMORY                                             */
  KD_ERR_DISPOSED,         /* KD_DISPOSED: use of a tensor after dispose()                 */
  KD_ERR_NOT_SUPPORTED,    /* KD_NOT_SUPPORTED: op/dtype/backend combination not available */
  KD_ERR_CUDA_UNAVAILABLE, /* KD_CUDA_UNAVAILABLE: no CUDA library, driver or GPU          */
  KD_ERR_CUDA,             /* KD_CUDA_ERROR: a CUDA runtime call failed                    */
  KD_ERR_CUDA_OOM,         /* KD_CUDA_OOM                                                  */
  KD_ERR_INTERNAL,         /* KD_INTERNAL: a bug in kindling                              */
  KD_ERR_LINALG,           /* KD_LINALG_ERROR: a singular / not positive-definite input or no
                            * convergence in a factorization (PyTorch's torch.linalg.LinAlgError) */
  KD_ERR_SCHEMA,           /* KD_INVALID_SCHEMA: an op schema that does not parse (kd.library.define) */
  KD_ERR_ALREADY_DEFINED,  /* KD_ALREADY_DEFINED: an op, kernel or formula registered twice */
  KD_ERR_CUDA_GRAPH_CAPTURE, /* KD_CUDA_GRAPH_CAPTURE: an operation a CUDA graph capture cannot
                              * record (a host read, a device sync, a data-dependent shape)      */
  KD_STATUS_COUNT
} kd_status;

/* Sets the thread-local message (printf-style) and returns `s`, so call sites read
 *   return kd_error(KD_ERR_SHAPE, "size mismatch: %lld vs %lld", a, b);            */
kd_status kd_error(kd_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *kd_last_error(void);
/* Stable code string for JS, e.g. "KD_SHAPE_MISMATCH". */
const char *kd_status_code(kd_status s);

/* Propagate a failing status. */
#define KD_TRY(expr)                                                                     \
  do {                                                                                   \
    kd_status kd_try_s_ = (expr);                                                        \
    if (kd_try_s_ != KD_OK) return kd_try_s_;                                            \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
