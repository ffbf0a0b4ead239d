/* device.cu - CUDA runtime start-up and devices: init (driver and GPU discovery, remembered),
 * device count, current device, names and properties, synchronize.
 * init creates no CUDA context: cudaGetDeviceCount only asks the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "kd_cuda_internal.h"

#define KD_CU_MAX_DEVICES 64

static kd_cuda_status kd_cu_init_status = KD_CUDA_ERR_NO_DEVICE;
static char kd_cu_init_message[512];
static int kd_cu_count;
static std::atomic<int> kd_cu_sms[KD_CU_MAX_DEVICES];

void kd_cu_versions(int *runtime, int *driver) {
  int r = 0, d = 0;
  if (cudaRuntimeGetVersion(&r) != cudaSuccess) r = 0;
  if (cudaDriverGetVersion(&d) != cudaSuccess) d = 0;
  if (runtime) *runtime = r;
  if (driver) *driver = d;
}

static void kd_cu_do_init(void) {
  int n = 0, runtime = 0, driver = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  kd_cu_versions(&runtime, &driver);
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  kd_cuda_status s = KD_CUDA_OK;
  char *m = kd_cu_init_message;
  size_t mn = sizeof kd_cu_init_message;
  m[0] = 0;
  if (e == cudaErrorInsufficientDriver && driver == 0) {
    s = KD_CUDA_ERR_NO_DRIVER;
    snprintf(m, mn, "CUDA driver not found (libcuda.so could not be loaded; is the NVIDIA driver installed?)");
  } else if (e == cudaErrorInsufficientDriver) {
    s = KD_CUDA_ERR_NO_DRIVER;
    snprintf(m, mn,
             "CUDA driver too old: it supports CUDA %d.%d, but libkindling_cuda.so was built with CUDA %d.%d "
             "(update the NVIDIA driver, or rebuild kindling with an older CUDA toolkit)",
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  } else if (e == cudaErrorNoDevice || (e == cudaSuccess && n <= 0)) {
    s = KD_CUDA_ERR_NO_DEVICE;
    if (visible)
      snprintf(m, mn, "no CUDA GPUs are available (CUDA_VISIBLE_DEVICES=\"%s\")", visible);
    else
      snprintf(m, mn, "no CUDA GPUs are available");
  } else if (e != cudaSuccess) {
    s = (e == cudaErrorSystemDriverMismatch || e == cudaErrorInitializationError ||
         e == cudaErrorCompatNotSupportedOnDevice)
            ? KD_CUDA_ERR_NO_DRIVER
            : KD_CUDA_ERR_NO_DEVICE;
    snprintf(m, mn, "CUDA initialization failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
  }
  kd_cu_count = s == KD_CUDA_OK ? (n < KD_CU_MAX_DEVICES ? n : KD_CU_MAX_DEVICES) : 0;
  kd_cu_init_status = s;
}

kd_cuda_status kd_cu_init(void) { return kd_cu_ready(); }

kd_cuda_status kd_cu_ready(void) {
  /* Runs kd_cu_do_init exactly once, thread-safely (C++11 static initialisation). */
  static const bool kd_cu_initialised = (kd_cu_do_init(), true);
  (void)kd_cu_initialised;
  if (kd_cu_init_status != KD_CUDA_OK) return kd_cu_error(kd_cu_init_status, "%s", kd_cu_init_message);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_check_device(int device) {
  KD_CU_TRY(kd_cu_ready());
  if (device < 0 || device >= kd_cu_count)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "Invalid device cuda:%d: %d CUDA device(s) available", device,
                       kd_cu_count);
  return KD_CUDA_OK;
}

int kd_cu_sm_count(int device) {
  if (device < 0 || device >= kd_cu_count) return 0;
  int v = kd_cu_sms[device].load(std::memory_order_relaxed);
  if (v > 0) return v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  kd_cu_sms[device].store(v, std::memory_order_relaxed);
  return v;
}

kd_cuda_status kd_cu_device_count(int *out) {
  *out = 0;
  KD_CU_TRY(kd_cu_ready());
  *out = kd_cu_count;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_current_device(int *out) {
  *out = 0;
  KD_CU_TRY(kd_cu_ready());
  KD_CU_CHECK(cudaGetDevice(out));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_set_device(int device) {
  KD_CU_TRY(kd_cu_check_device(device));
  KD_CU_CHECK(cudaSetDevice(device));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_device_properties(int device, kd_cuda_device_props *out) {
  memset(out, 0, sizeof *out);
  KD_CU_TRY(kd_cu_check_device(device));
  cudaDeviceProp p;
  KD_CU_CHECK(cudaGetDeviceProperties(&p, device));
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->total_memory = (uint64_t)p.totalGlobalMem;
  out->major = p.major;
  out->minor = p.minor;
  out->multiprocessor_count = p.multiProcessorCount;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_device_name(int device, char *buf, size_t n) {
  if (!buf || n == 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "device_name: empty buffer");
  buf[0] = 0;
  kd_cuda_device_props p;
  KD_CU_TRY(kd_cu_device_properties(device, &p));
  snprintf(buf, n, "%s", p.name);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_synchronize(int device) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  KD_CU_CHECK(cudaDeviceSynchronize());
  return KD_CUDA_OK;
}
