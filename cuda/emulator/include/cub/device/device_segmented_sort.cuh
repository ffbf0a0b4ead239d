/* cub/device/device_segmented_sort.cuh (emulated GPU) - cub::DeviceSegmentedSort::StableSortPairs:
 * each segment [begin_offsets[i], end_offsets[i]) sorted stably by key, run in stream order (the
 * offsets are device memory, read when the sort runs), with CUB's two-phase temporary storage. */
#ifndef KD_EMU_CUB_DEVICE_SEGMENTED_SORT_CUH
#define KD_EMU_CUB_DEVICE_SEGMENTED_SORT_CUH

#include "../detail/radix.h"

namespace cub {

struct DeviceSegmentedSort {
  template <typename K, typename V, typename N, typename S, typename BeginIt, typename EndIt>
  static cudaError_t StableSortPairs(void *d_temp_storage, size_t &temp_storage_bytes, const K *d_keys_in,
                                     K *d_keys_out, const V *d_values_in, V *d_values_out, N num_items,
                                     S num_segments, BeginIt d_begin_offsets, EndIt d_end_offsets,
                                     cudaStream_t stream = 0) {
    return detail::segmented_sort_pairs(d_temp_storage, temp_storage_bytes, d_keys_in, d_keys_out, d_values_in,
                                        d_values_out, (int64_t)num_items, (int64_t)num_segments, d_begin_offsets,
                                        d_end_offsets, false, stream);
  }
  template <typename K, typename V, typename N, typename S, typename BeginIt, typename EndIt>
  static cudaError_t StableSortPairsDescending(void *d_temp_storage, size_t &temp_storage_bytes, const K *d_keys_in,
                                               K *d_keys_out, const V *d_values_in, V *d_values_out, N num_items,
                                               S num_segments, BeginIt d_begin_offsets, EndIt d_end_offsets,
                                               cudaStream_t stream = 0) {
    return detail::segmented_sort_pairs(d_temp_storage, temp_storage_bytes, d_keys_in, d_keys_out, d_values_in,
                                        d_values_out, (int64_t)num_items, (int64_t)num_segments, d_begin_offsets,
                                        d_end_offsets, true, stream);
  }
};

}  // namespace cub

#endif
