/* cub/block/block_scan.cuh (emulated GPU) - cub::BlockScan's inclusive scans for a 1-D block of
 * BLOCK_DIM_X threads, written in the device language the emulator runs (shared memory and
 * __syncthreads), with CUB's contract: every thread of the block calls it; TempStorage may be
 * reused only after a __syncthreads. The block aggregate is the combination of all inputs. */
#ifndef KD_EMU_CUB_BLOCK_SCAN_CUH
#define KD_EMU_CUB_BLOCK_SCAN_CUH

#include "../../cuda_runtime.h"

namespace cub {

template <typename T, int BLOCK_DIM_X>
class BlockScan {
 public:
  struct TempStorage {
    T v[BLOCK_DIM_X];
    T total;
  };
  explicit BlockScan(TempStorage &t) : t_(t) {}

  template <typename Op>
  void InclusiveScan(T input, T &output, Op op, T &block_aggregate) {
    const unsigned i = threadIdx.x;
    if (blockDim.x * blockDim.y * blockDim.z != BLOCK_DIM_X) __trap(); /* CUB's precondition */
    t_.v[i] = input;
    __syncthreads();
    if (i == 0) { /* a sequential scan by thread 0: the order of combination is CUB's left fold */
      for (int j = 1; j < BLOCK_DIM_X; j++) t_.v[j] = op(t_.v[j - 1], t_.v[j]);
      t_.total = t_.v[BLOCK_DIM_X - 1];
    }
    __syncthreads();
    output = t_.v[i];
    block_aggregate = t_.total;
  }
  template <typename Op>
  void InclusiveScan(T input, T &output, Op op) {
    T agg;
    InclusiveScan(input, output, op, agg);
  }
  void InclusiveSum(T input, T &output, T &block_aggregate) {
    InclusiveScan(input, output, [](T a, T b) { return a + b; }, block_aggregate);
  }
  void InclusiveSum(T input, T &output) {
    T agg;
    InclusiveSum(input, output, agg);
  }

 private:
  TempStorage &t_;
};

}  // namespace cub

#endif
