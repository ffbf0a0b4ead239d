/* status.c - thread-local error messages and the stable code names of kd_status. */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char kd_error_message[1024];

static const char *const kd_status_codes[KD_STATUS_COUNT] = {
    [KD_OK] = "KD_OK",
    [KD_ERR_INVALID_ARGUMENT] = "KD_INVALID_ARGUMENT",
    [KD_ERR_TYPE] = "KD_INVALID_TYPE",
    [KD_ERR_SHAPE] = "KD_SHAPE_MISMATCH",
    [KD_ERR_DTYPE] = "KD_DTYPE_MISMATCH",
    [KD_ERR_DEVICE] = "KD_DEVICE_MISMATCH",
    [KD_ERR_INDEX] = "KD_INDEX_OUT_OF_RANGE",
    [KD_ERR_OOM] = "KD_OUT_OF_MEMORY",
    [KD_ERR_DISPOSED] = "KD_DISPOSED",
    [KD_ERR_NOT_SUPPORTED] = "KD_NOT_SUPPORTED",
    [KD_ERR_CUDA_UNAVAILABLE] = "KD_CUDA_UNAVAILABLE",
    [KD_ERR_CUDA] = "KD_CUDA_ERROR",
    [KD_ERR_CUDA_OOM] = "KD_CUDA_OOM",
    [KD_ERR_INTERNAL] = "KD_INTERNAL",
    [KD_ERR_LINALG] = "KD_LINALG_ERROR",
    [KD_ERR_SCHEMA] = "KD_INVALID_SCHEMA",
    [KD_ERR_ALREADY_DEFINED] = "KD_ALREADY_DEFINED",
    [KD_ERR_CUDA_GRAPH_CAPTURE] = "KD_CUDA_GRAPH_CAPTURE",
};

kd_status kd_error(kd_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kd_error_message, sizeof kd_error_message, fmt, ap);
  va_end(ap);
  return s;
}

const char *kd_last_error(void) { return kd_error_message; }

const char *kd_status_code(kd_status s) {
  if ((unsigned)s >= KD_STATUS_COUNT) return "KD_INTERNAL";
  return kd_status_codes[s];
}
