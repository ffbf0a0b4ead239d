/* device.c - device names, the backend registry, and the built-in CPU backend (memory from
 * the caching host allocator, copies with memcpy). The CUDA backend registers itself from
 * src/cuda_bridge/ when its library loads. */
#include "core/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc_host.h"
#include "cuda_bridge/bridge.h"

static int kd_cpu_device_count(void) { return 1; }
static int kd_cpu_current_device(void) { return 0; }
static kd_status kd_cpu_alloc(int index, size_t nbytes, void **out) { return kd_host_alloc(nbytes, out); }
static void kd_cpu_free(int index, void *ptr, size_t nbytes) { kd_host_free(ptr, nbytes); }
static kd_status kd_cpu_memcpy(void *dst, kd_device dd, const void *src, kd_device sd, size_t n) {
  if (n) memmove(dst, src, n);
  return KD_OK;
}

static const kd_device_backend kd_cpu_backend = {
    /* .name           = */ "cpu",
    /* .device_count   = */ kd_cpu_device_count,
    /* .current_device = */ kd_cpu_current_device,
    /* .alloc          = */ kd_cpu_alloc,
    /* .free           = */ kd_cpu_free,
    /* .memcpy         = */ kd_cpu_memcpy,
};

static const kd_device_backend *kd_backends[KD_DEVICE_TYPE_COUNT] = {[KD_DEVICE_CPU] = &kd_cpu_backend};

void kd_device_backend_register(kd_device_type type, const kd_device_backend *backend) { kd_backends[type] = backend; }

kd_status kd_device_backend_get(kd_device_type type, const kd_device_backend **out) {
  if ((unsigned)type >= KD_DEVICE_TYPE_COUNT) return kd_error(KD_ERR_INVALID_ARGUMENT, "invalid device type");
  if (!kd_backends[type] && type == KD_DEVICE_CUDA) KD_TRY(kd_cuda_bridge_load());
  if (!kd_backends[type]) return kd_error(KD_ERR_NOT_SUPPORTED, "no backend for this device type");
  *out = kd_backends[type];
  return KD_OK;
}

kd_status kd_device_check(kd_device d) {
  const kd_device_backend *be = NULL;
  KD_TRY(kd_device_backend_get((kd_device_type)d.type, &be));
  int n = be->device_count();
  if (d.index < 0 || d.index >= n) {
    char s[32];
    kd_device_format(d, s, sizeof s);
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Invalid device %s: %d %s device(s) available", s, n, be->name);
  }
  return KD_OK;
}

kd_status kd_device_parse(const char *s, kd_device *out) {
  kd_device d;
  if (strcmp(s, "cpu") == 0) { *out = kd_device_cpu(); return KD_OK; }
  if (strncmp(s, "cuda", 4) == 0 && (s[4] == 0 || s[4] == ':')) {
    d.type = KD_DEVICE_CUDA;
    if (s[4] == 0) {
      const kd_device_backend *be = NULL;
      KD_TRY(kd_device_backend_get(KD_DEVICE_CUDA, &be));
      d.index = (int16_t)be->current_device();
    } else {
      char *end;
      long idx = strtol(s + 5, &end, 10);
      if (end == s + 5 || *end || idx < 0 || idx > 1024)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "Invalid device string: '%s'", s);
      d.index = (int16_t)idx;
    }
    *out = d;
    return KD_OK;
  }
  return kd_error(KD_ERR_INVALID_ARGUMENT,
                  "Expected one of cpu, cuda device type at start of device string: %s", s);
}

void kd_device_format(kd_device d, char *buf, size_t n) {
  if (d.type == KD_DEVICE_CPU) snprintf(buf, n, "cpu");
  else snprintf(buf, n, "cuda:%d", d.index);
}
