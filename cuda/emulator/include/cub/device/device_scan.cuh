/* cub/device/device_scan.cuh (emulated GPU) - cub::DeviceScan::InclusiveSum in stream order, with
 * CUB's two-phase temporary storage protocol. */
#ifndef KD_EMU_CUB_DEVICE_SCAN_CUH
#define KD_EMU_CUB_DEVICE_SCAN_CUH

#include "../detail/radix.h"

namespace cub {

struct DeviceScan {
  template <typename In, typename Out, typename N>
  static cudaError_t InclusiveSum(void *d_temp_storage, size_t &temp_storage_bytes, In d_in, Out d_out, N num_items,
                                  cudaStream_t stream = 0) {
    if (!d_temp_storage) {
      temp_storage_bytes = detail::kScanTempBytes;
      return cudaSuccess;
    }
    if (temp_storage_bytes < detail::kScanTempBytes) return cudaErrorInvalidValue;
    const int64_t n = (int64_t)num_items;
    return kd_emu::enqueue(stream, "cub::DeviceScan::InclusiveSum", 1, [=]() {
      if (n <= 0) return;
      auto acc = d_in[0];
      d_out[0] = acc;
      for (int64_t i = 1; i < n; i++) {
        acc = acc + d_in[i];
        d_out[i] = acc;
      }
    });
  }
};

}  // namespace cub

#endif
