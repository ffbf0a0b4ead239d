/* api.cu - the exported entry point kd_cuda_get_api (the library's only visible symbol), the
 * table of function pointers it returns, and the thread-local error messages.
 * Build: node tools/build.js (nvcc, every .cu file of cuda/ into build/Release/libkindling_cuda.so). */
#include <stdarg.h>
#include <stdio.h>

#include "kd_cuda_internal.h"

kd_cuda_status kd_cu_elementwise(int device, const kd_cuda_ew *e, int32_t *flags); /* ops_common.cu */
kd_cuda_status kd_cu_gemm(int device, const kd_cuda_gemm *g);                      /* ops_matmul.cu */
kd_cuda_status kd_cu_reduce(int device, const kd_cuda_reduce *r);                  /* ops_reduce.cu */
kd_cuda_status kd_cu_rows(int device, const kd_cuda_rows *r);                      /* ops_softmax.cu */
kd_cuda_status kd_cu_random(int device, const kd_cuda_random *r);                  /* ops_random.cu */

kd_cuda_status kd_cu_op(int device, kd_cuda_op *op);                              /* ops_op.cu */
void kd_cu_set_launch_observer(void (*fn)(void *, const char *, int, uintptr_t), void *user); /* launch_observer.cu */

static thread_local char kd_cu_message[1024];

kd_cuda_status kd_cu_error(kd_cuda_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kd_cu_message, sizeof kd_cu_message, fmt, ap);
  va_end(ap);
  return s;
}

const char *kd_cu_last_error(void) { return kd_cu_message; }

static const char *const kd_cu_status_names[KD_CUDA_STATUS_COUNT] = {
    /* [KD_CUDA_OK]                   = */ "KD_CUDA_OK",
    /* [KD_CUDA_ERR_NO_DRIVER]        = */ "KD_CUDA_ERR_NO_DRIVER",
    /* [KD_CUDA_ERR_NO_DEVICE]        = */ "KD_CUDA_ERR_NO_DEVICE",
    /* [KD_CUDA_ERR_INVALID_ARGUMENT] = */ "KD_CUDA_ERR_INVALID_ARGUMENT",
    /* [KD_CUDA_ERR_OOM]              = */ "KD_CUDA_ERR_OOM",
    /* [KD_CUDA_ERR_RUNTIME]          = */ "KD_CUDA_ERR_RUNTIME",
    /* [KD_CUDA_ERR_NOT_SUPPORTED]    = */ "KD_CUDA_ERR_NOT_SUPPORTED",
};

const char *kd_cu_status_name(kd_cuda_status s) {
  return (unsigned)s < KD_CUDA_STATUS_COUNT ? kd_cu_status_names[s] : "KD_CUDA_ERR_UNKNOWN";
}

/* Errors after which the context is unusable (cudaGetLastError cannot clear them). */
static bool kd_cu_is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

kd_cuda_status kd_cu_fail(cudaError_t e, const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error so the next launch check does not see it */
  kd_cuda_status s = KD_CUDA_ERR_RUNTIME;
  const char *hint = "";
  switch (e) {
    case cudaErrorMemoryAllocation: s = KD_CUDA_ERR_OOM; break;
    case cudaErrorInsufficientDriver: s = KD_CUDA_ERR_NO_DRIVER; break;
    case cudaErrorNoDevice: s = KD_CUDA_ERR_NO_DEVICE; break;
    case cudaErrorInvalidDevice: s = KD_CUDA_ERR_INVALID_ARGUMENT; break;
    case cudaErrorNoKernelImageForDevice:
      hint = " (libkindling_cuda.so was not built for this GPU's architecture; rebuild with "
             "KINDLING_CUDA_ARCHS set to include it, e.g. KINDLING_CUDA_ARCHS=80,86,89,90)";
      break;
    default:
      if (kd_cu_is_sticky(e))
        hint = " (CUDA kernel errors are reported asynchronously, so this may come from an earlier "
               "kernel; the CUDA context is now unusable and the process must be restarted)";
      break;
  }
  return kd_cu_error(s, "CUDA error: %s (%s) in %s%s", cudaGetErrorString(e), cudaGetErrorName(e), what, hint);
}

static const kd_cuda_api kd_cu_api = {
    /* .abi_version       = */ KD_CUDA_ABI_VERSION,
    /* .struct_size       = */ sizeof(kd_cuda_api),
    /* .last_error        = */ kd_cu_last_error,
    /* .status_name       = */ kd_cu_status_name,
    /* .init              = */ kd_cu_init,
    /* .versions          = */ kd_cu_versions,
    /* .device_count      = */ kd_cu_device_count,
    /* .current_device    = */ kd_cu_current_device,
    /* .set_device        = */ kd_cu_set_device,
    /* .device_name       = */ kd_cu_device_name,
    /* .device_properties = */ kd_cu_device_properties,
    /* .synchronize       = */ kd_cu_synchronize,
    /* .malloc            = */ kd_cu_malloc,
    /* .free              = */ kd_cu_free,
    /* .memcpy_h2d        = */ kd_cu_memcpy_h2d,
    /* .memcpy_d2h        = */ kd_cu_memcpy_d2h,
    /* .memcpy_d2d        = */ kd_cu_memcpy_d2d,
    /* .copy              = */ kd_cu_copy,
    /* .fill              = */ kd_cu_fill,
    /* ---- version 2 ---- */
    /* .record_stream           = */ kd_cu_record_stream,
    /* .memory_stats_json       = */ kd_cu_memory_stats_json,
    /* .memory_snapshot_json    = */ kd_cu_memory_snapshot_json,
    /* .memory_summary          = */ kd_cu_memory_summary,
    /* .free_string             = */ kd_cu_free_string,
    /* .empty_cache             = */ kd_cu_empty_cache,
    /* .reset_peak_memory_stats = */ kd_cu_reset_peak_memory_stats,
    /* .set_memory_fraction     = */ kd_cu_set_memory_fraction,
    /* .stream_create           = */ kd_cu_stream_create,
    /* .stream_query            = */ kd_cu_stream_query,
    /* .current_stream          = */ kd_cu_current_stream,
    /* .set_current_stream      = */ kd_cu_set_current_stream,
    /* .event_create            = */ kd_cu_event_create,
    /* .event_destroy           = */ kd_cu_event_destroy,
    /* .event_record            = */ kd_cu_event_record,
    /* .event_query             = */ kd_cu_event_query,
    /* .event_elapsed_time      = */ kd_cu_event_elapsed_time,
    /* .stream_wait_event       = */ kd_cu_stream_wait_event,
    /* .launch_host_func        = */ kd_cu_launch_host_func,
    /* .event_host_func         = */ kd_cu_event_host_func,
    /* .peek_error              = */ kd_cu_peek_error,
    /* .host_alloc              = */ kd_cu_host_alloc,
    /* .host_free               = */ kd_cu_host_free,
    /* .host_owns               = */ kd_cu_host_owns,
    /* .memcpy_h2d_async        = */ kd_cu_memcpy_h2d_async,
    /* .memcpy_d2h_async        = */ kd_cu_memcpy_d2h_async,
    /* .spin                    = */ kd_cu_spin,

    /* ---- version 3 ---- */
    /* .elementwise       = */ kd_cu_elementwise,
    /* .gemm              = */ kd_cu_gemm,

    /* ---- version 4 ---- */
    /* .reduce            = */ kd_cu_reduce,
    /* .rows              = */ kd_cu_rows,
    /* .random            = */ kd_cu_random,

    /* ---- version 5 ---- */
    /* .op                = */ kd_cu_op,

    /* ---- version 6 ---- */
    /* .set_launch_observer = */ kd_cu_set_launch_observer,
};

extern "C" __attribute__((visibility("default"))) const kd_cuda_api *kd_cuda_get_api(int abi_version) {
  if (abi_version != KD_CUDA_ABI_VERSION) {
    kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "libkindling_cuda.so implements CUDA ABI version %d, not %d",
                KD_CUDA_ABI_VERSION, abi_version);
    return NULL;
  }
  return &kd_cu_api;
}
