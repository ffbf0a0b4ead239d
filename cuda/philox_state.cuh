/* philox_state.cuh - where a random kernel finds its generator seed and offset (as PyTorch's
 * PhiloxCudaState and at::cuda::philox::unpack).
 *
 * Note [Random ops in CUDA graphs]
 * Eagerly, the host takes an offset from the generator for each random op (Note [Random number
 * mapping] in src/core/random.h) and the kernel gets seed and offset by value. A graph replays
 * its kernels with the arguments of the capture, so by value it would repeat the capture's
 * numbers. While a stream captures, a random launch on it gets instead a pointer to the graph's
 * two device words {seed, base offset} and its intra-graph increment (its host offset minus the
 * generator offset at capture begin); each thread reads them once: offset = base + increment.
 * Before each replay the graph writes the generator's current seed and offset into those words
 * (one small copy on the replay's stream) and the generator advances by the graph's total
 * increment (its offset at capture end minus at begin), so replay k draws exactly what the k-th
 * eager run of the same work would draw from the same seed. Like an eager run, the capture itself
 * advances the generator too. */
#ifndef KD_CU_PHILOX_STATE_CUH
#define KD_CU_PHILOX_STATE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

struct kd_cu_philox {
  uint64_t seed, offset;     /* eager: by value */
  const uint64_t *graph;     /* captured: {seed, base offset} in device memory, else NULL */
  uint64_t increment;        /* captured: offset = graph[1] + increment */

  /* The seed and offset of this launch (read once per thread). */
  __device__ __forceinline__ void unpack(uint64_t &s, uint64_t &o) const {
    if (graph) {
      s = graph[0];
      o = graph[1] + increment;
    } else {
      s = seed;
      o = offset;
    }
  }
};

/* The state for a random launch on stream s of `device` drawing with the host's (seed, offset):
 * by value, or the capturing graph's words when s is capturing (graphs.cu). */
kd_cu_philox kd_cu_graph_philox(int device, cudaStream_t s, uint64_t seed, uint64_t offset);

#endif
