/* device.h - devices ("cpu", "cuda:N") and the per-device-type backend interface: memory
 * and copies. The CPU backend is built in; the CUDA backend is registered by
 * src/cuda_bridge/ when libkindling_cuda.so is dlopen'ed on first use. */
#ifndef KD_DEVICE_H
#define KD_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "dispatch/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_device_type { KD_DEVICE_CPU = 0, KD_DEVICE_CUDA = 1, KD_DEVICE_TYPE_COUNT } kd_device_type;

typedef struct kd_device {
  int16_t type;  /* kd_device_type */
  int16_t index; /* 0 for the CPU */
} kd_device;

static inline kd_device kd_device_cpu(void) { kd_device d; d.type = KD_DEVICE_CPU; d.index = 0; return d; }
static inline bool kd_device_eq(kd_device a, kd_device b) { return a.type == b.type && a.index == b.index; }
static inline kd_key kd_device_key(kd_device d) { return d.type == KD_DEVICE_CUDA ? KD_KEY_CUDA : KD_KEY_CPU; }

/* "cpu", "cuda", "cuda:1" -> device (a bare "cuda" means the current CUDA device). */
kd_status kd_device_parse(const char *s, kd_device *out);
/* Writes "cpu" or "cuda:N". */
void kd_device_format(kd_device d, char *buf, size_t n);

/* A device type's memory and copy functions, a struct of function pointers as in ggml. */
typedef struct kd_device_backend {
  /* .name           = */ const char *name;
  /* .device_count   = */ int (*device_count)(void);
  /* .current_device = */ int (*current_device)(void);
  /* .alloc          = */ kd_status (*alloc)(int index, size_t nbytes, void **out);
  /* .free           = */ void (*free)(int index, void *ptr, size_t nbytes);
  /* .memcpy: any copy with this device type on at least one side; for CUDA, ordered on the
   * current stream of the device involved (blocking where the host side is pageable). */
  kd_status (*memcpy)(void *dst, kd_device dst_dev, const void *src, kd_device src_dev, size_t nbytes);
} kd_device_backend;

/* The backend for a device type; for CUDA this loads the CUDA library on first use and
 * fails with KD_ERR_CUDA_UNAVAILABLE (and a message saying why) when it cannot. */
kd_status kd_device_backend_get(kd_device_type type, const kd_device_backend **out);
void kd_device_backend_register(kd_device_type type, const kd_device_backend *backend);
/* Checks that a device exists (index in range, CUDA usable). */
kd_status kd_device_check(kd_device d);

#ifdef __cplusplus
}
#endif
#endif
