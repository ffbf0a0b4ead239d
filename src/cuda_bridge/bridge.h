/* bridge.h - the CPU addon's side of the CUDA backend. kindling.node never links CUDA: on
 * first CUDA use it dlopens libkindling_cuda.so (KINDLING_CUDA_LIBRARY, next to kindling.node,
 * or in a directory added by kd_cuda_add_library_dir), checks the ABI version, registers the CUDA device backend and the
 * CUDA kernels it exports. Every failure (no library, no driver, no GPU) is remembered and
 * reported as KD_ERR_CUDA_UNAVAILABLE with the reason; nothing crashes. */
#ifndef KD_CUDA_BRIDGE_H
#define KD_CUDA_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

kd_status kd_cuda_bridge_load(void);
/* Loads if needed; false (never an error) when CUDA cannot be used. */
bool kd_cuda_is_available(void);
/* The emulated GPU's counters (cuda/emulator); false when the CUDA library in use is not the
 * emulator (or CUDA is unavailable). */
struct kd_cuda_emu_stats;
bool kd_cuda_emulator_stats(struct kd_cuda_emu_stats *out);
/* The reason CUDA is unavailable ("" when it is available or was never tried). */
const char *kd_cuda_unavailable_reason(void);
/* Whether the CUDA library exists where kd_cuda_bridge_load looks for it (kd.build.cuda), without
 * loading it: true when kindling was built with nvcc, whether or not a driver and GPU are here. */
bool kd_cuda_library_found(void);
/* Adds a directory searched for the CUDA library when it is not next to kindling.node (at most
 * four; before the first load). */
kd_status kd_cuda_add_library_dir(const char *dir);

/* Device queries for kindling.cuda (src/napi/cuda.c). Each loads the library if needed and
 * fails with KD_ERR_CUDA_UNAVAILABLE when CUDA cannot be used, KD_ERR_INVALID_ARGUMENT for a
 * device index out of range, KD_ERR_CUDA for a CUDA runtime error. The current device is per
 * host thread, as in the CUDA runtime. */
typedef struct kd_cuda_properties {
  char name[256];
  uint64_t total_memory; /* bytes */
  int major, minor;      /* compute capability */
  int multiprocessor_count;
} kd_cuda_properties;

kd_status kd_cuda_current_device(int *out);
kd_status kd_cuda_set_device(int index);
kd_status kd_cuda_get_properties(int index, kd_cuda_properties *out);


/* ---- streams, events, memory, pinned memory (src/napi/cuda.c) ---- */
struct kd_cuda_api;
/* The loaded library's function table; KD_ERR_CUDA_UNAVAILABLE when CUDA cannot be used. */
kd_status kd_cuda_api_get(const struct kd_cuda_api **out);
/* A failed kd_cuda_status (the library's message) as a kd_status error. */
kd_status kd_cuda_status_error(int cuda_status);
/* A contiguous tensor with t's values on t's CUDA device (t itself, retained, when it is
 * contiguous already). */
kd_status kd_cuda_contiguous(kd_tensor *t, kd_tensor **out);
/* A copy of the CPU tensor t in pinned host memory (t retained when already pinned). */
kd_status kd_cuda_pin_memory(kd_tensor *t, kd_tensor **out);
/* Whether t's storage is pinned host memory of the CUDA library (false without CUDA). */
bool kd_cuda_is_pinned(const kd_tensor *t);
/* On this thread, host-to-device copies from pinned memory are asynchronous while set (the
 * pinned block is protected by an event instead of a wait): t.to('cuda', {nonBlocking}). */
void kd_cuda_set_non_blocking(bool on);
/* A CUDA graph capture begins (on) or ends on `device`; while one runs, kd_cuda_capture_refuse
 * returns KD_ERR_CUDA_GRAPH_CAPTURE naming `what` (Note [Refused during graph capture]). */
void kd_cuda_set_capturing(int device, bool on);
kd_status kd_cuda_capture_refuse(int device, const char *what);

#ifdef __cplusplus
}
#endif
/* kd.backends.cuda.matmul.allowTF32: whether float32 gemms may use TF32 (default false). */
void kd_cuda_set_allow_tf32(bool on);
bool kd_cuda_get_allow_tf32(void);

#endif
