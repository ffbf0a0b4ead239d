/* cub/device/device_radix_sort.cuh (emulated GPU) - cub::DeviceRadixSort::SortPairs(Descending)
 * for unsigned integer keys: a stable LSD radix sort over bits [begin_bit, end_bit), run in
 * stream order, with CUB's two-phase temporary storage protocol (a call with d_temp_storage ==
 * nullptr only writes temp_storage_bytes) and the storage really used as the sort's buffers. */
#ifndef KD_EMU_CUB_DEVICE_RADIX_SORT_CUH
#define KD_EMU_CUB_DEVICE_RADIX_SORT_CUH

#include "../detail/radix.h"

namespace cub {

struct DeviceRadixSort {
  template <typename K, typename V, typename N>
  static cudaError_t SortPairs(void *d_temp_storage, size_t &temp_storage_bytes, const K *d_keys_in, K *d_keys_out,
                               const V *d_values_in, V *d_values_out, N num_items, int begin_bit = 0,
                               int end_bit = (int)(sizeof(K) * 8), cudaStream_t stream = 0) {
    return detail::sort_pairs(d_temp_storage, temp_storage_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out,
                              (int64_t)num_items, begin_bit, end_bit, false, stream);
  }
  template <typename K, typename V, typename N>
  static cudaError_t SortPairsDescending(void *d_temp_storage, size_t &temp_storage_bytes, const K *d_keys_in,
                                         K *d_keys_out, const V *d_values_in, V *d_values_out, N num_items,
                                         int begin_bit = 0, int end_bit = (int)(sizeof(K) * 8),
                                         cudaStream_t stream = 0) {
    return detail::sort_pairs(d_temp_storage, temp_storage_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out,
                              (int64_t)num_items, begin_bit, end_bit, true, stream);
  }
};

}  // namespace cub

#endif
