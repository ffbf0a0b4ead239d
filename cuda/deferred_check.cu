/* deferred_check.cu - the index check that records its first bad value in the device's fault
 * record instead of being read back, and the record of a raised flag (Note [Deferred index
 * errors] in deferred_check.cuh). */
#include "deferred_check.cuh"
#include "scratch.cuh"

/* Stores v as the failure of check `seq` unless an earlier failure holds the record. */
static __device__ __forceinline__ void kd_cu_fault_record(kd_cuda_fault *f, uint64_t seq, int64_t v) {
  if (atomicCAS((unsigned long long *)&f->claim, 0ull, 1ull) != 0ull) return;
  f->value = v;
  __threadfence_system();
  atomicExch((unsigned long long *)&f->seq, (unsigned long long)seq);
}

/* scratch[0] = the lowest bad position, scratch[1] = finished blocks, both ~0 on entry (one
 * memset of 0xff). clamp: bad values become 0 (else the list is left as it is). */
static __global__ void kd_cu_deferred_check_kernel(int64_t *p, int64_t n, kd_cu_check_rule r, int wrap, int clamp,
                                            unsigned long long *scratch, kd_cuda_fault *f, uint64_t seq) {
  __shared__ int last;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t v = p[i];
    if (v < 0 && r.allow_neg) v += r.size;
    if (r.bad(v)) atomicMin(&scratch[0], (unsigned long long)i);
    else if (wrap && v != p[i]) p[i] = v;
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) /* the counter starts at ~0: the last of g blocks sees g - 2 */
    last = atomicAdd(&scratch[1], 1ull) == (unsigned long long)gridDim.x - 2ull;
  __syncthreads();
  if (!last) return;
  __threadfence();
  const unsigned long long first = atomicAdd(&scratch[0], 0ull);
  if (first == ~0ull) return;
  if (threadIdx.x == 0) kd_cu_fault_record(f, seq, p[first]);
  __syncthreads();
  if (!clamp) return;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) /* wrapped negatives are in range now */
    if (r.bad(p[i])) p[i] = 0;
}

kd_cuda_status kd_cu_deferred_check(int device, int64_t *p, int64_t n, const kd_cu_check_rule &r, int wrap, int clamp,
                                    int64_t record, int64_t seq) {
  if (n == 0) return KD_CUDA_OK;
  if (!p || !record || seq <= 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "deferred check: bad arguments");
  cudaStream_t s = kd_cu_stream(device);
  kd_cu_scratch w(device);
  KD_CU_TRY(w.alloc(2 * sizeof(unsigned long long)));
  KD_CU_CHECK(cudaMemsetAsync(w.p, 0xff, 2 * sizeof(unsigned long long), s));
  KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_deferred_check_kernel)(
      p, n, r, wrap, clamp, (unsigned long long *)w.p, (kd_cuda_fault *)(uintptr_t)record, (uint64_t)seq);
  KD_CU_CHECK_LAUNCH("the index check kernel");
  return KD_CUDA_OK;
}

static __global__ void kd_cu_deferred_flag_kernel(const int *flag, kd_cuda_fault *f, uint64_t seq) {
  if (*flag) kd_cu_fault_record(f, seq, 0);
}

kd_cuda_status kd_cu_deferred_flag(int device, const int *flag, int64_t record, int64_t seq) {
  if (!flag || !record || seq <= 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "deferred check: bad arguments");
  KD_LAUNCH(1, 1, 0, kd_cu_stream(device), kd_cu_deferred_flag_kernel)(flag, (kd_cuda_fault *)(uintptr_t)record, (uint64_t)seq);
  KD_CU_CHECK_LAUNCH("the flag record kernel");
  return KD_CUDA_OK;
}
