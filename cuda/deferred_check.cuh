/* deferred_check.cuh - the device side of deferred errors: the one-launch check of an int64 list
 * that records its first bad value in the device's fault record (ops_index.cu's index check,
 * ops_loss.cu's nllLoss target check), and the record of a flag a kernel raised (ops_loss.cu's
 * binaryCrossEntropy input range); the kernels are in deferred_check.cu.
 *
 * Note [Deferred index errors]
 * An index out of range can only be found on the device. Reading the check's result at the call
 * would cost one device sync per indexing op or nllLoss; instead, as CUDA's device-side asserts,
 * the error is recorded and reported at the next sync point:
 *   - The host (src/cuda_bridge/deferred_check.c) keeps per device a kd_cuda_fault in pinned host
 *     memory (visible to kernels at the same address under unified addressing) and a small table
 *     of pending checks: sequence number -> what builds the CPU's exact message (op text, size,
 *     dim). It passes the record's address and the check's number in the check op (i[2], i[3]).
 *   - The check kernel finds the lowest bad position (atomicMin into a scratch word); the last
 *     block to finish (a counter in the same scratch) stores the value there into the record,
 *     if no earlier check holds it (claim, value, then seq), and makes the list safe: bad
 *     indices are clamped to 0 (the gather/scatter kernels that follow stay in bounds; the
 *     nllLoss kernels skip targets out of range instead, the list being the caller's tensor).
 *     One launch, no host read.
 *   - Every sync point (a blocking device-to-host copy, synchronize, the completion of an async
 *     data() or synchronize()) reads the record, already on the host once the device work is
 *     done; if set, it is cleared and thrown once as the CPU's KD_INDEX_OUT_OF_RANGE message.
 * Results computed from a clamped index are garbage, as on CUDA after a failed assert; the
 * error is what the program sees. */
#ifndef KD_CUDA_DEFERRED_CHECK_CUH
#define KD_CUDA_DEFERRED_CHECK_CUH

#include "kd_cuda_api.h"
#include "kd_cuda_internal.h"

/* Which values are bad (after the wrap of negatives, when the check does one). */
struct kd_cu_check_rule {
  int64_t size, ignore;
  int allow_neg, has_ignore;
  __device__ __forceinline__ bool bad(int64_t v) const {
    return !(has_ignore && v == ignore) && (v < 0 || v >= size);
  }
};

/* Launches the check of p[0..n) on the device's current stream: bad values (rule) are recorded
 * as check `seq` in the kd_cuda_fault at address `record`; wrap: negatives wrapped in place;
 * clamp: bad values set to 0. */
kd_cuda_status kd_cu_deferred_check(int device, int64_t *p, int64_t n, const kd_cu_check_rule &r, int wrap, int clamp,
                                    int64_t record, int64_t seq);

/* Launches the record of check `seq` as failed in the kd_cuda_fault at address `record` when the
 * device int `*flag` is nonzero (one thread, after the kernel that raises the flag on the same
 * stream): a check folded into a compute kernel, with no host read. */
kd_cuda_status kd_cu_deferred_flag(int device, const int *flag, int64_t record, int64_t seq);

#endif
