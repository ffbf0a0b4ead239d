/* deferred_check.h - the host side of deferred index errors (Note [Deferred index errors] in
 * cuda/deferred_check.cuh): per CUDA device, the fault record the check kernels write and the
 * table of pending checks that turns a recorded bad value into the CPU's error. */
#ifndef KD_CUDA_DEFERRED_CHECK_H
#define KD_CUDA_DEFERRED_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kd_cuda_api;
typedef kd_status (*kd_cuda_check_fail_fn)(int64_t bad, const int64_t args[3]);

/* A check about to be launched on `device`: *record = the address of the device's fault record
 * (for the kernel), *seq = the check's number; fail(bad, args) builds its error. false when the
 * record cannot be had (out of pinned memory): the caller checks synchronously. */
bool kd_cuda_deferred_begin(const struct kd_cuda_api *api, int device, kd_cuda_check_fail_fn fail,
                            const int64_t args[3], int64_t *record, int64_t *seq);

/* At a sync point of `device` (the work to report on has finished): the error of the first
 * failed check since the last sync point, once (the record is cleared); KD_OK if none. */
kd_status kd_cuda_deferred_take(int device);

#ifdef __cplusplus
}
#endif
#endif
