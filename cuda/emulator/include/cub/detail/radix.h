/* cub/detail/radix.h (emulated GPU) - the stable radix sort behind the emulated CUB device sorts.
 * Keys are unsigned integers compared on bits [begin_bit, end_bit) (descending: each 8-bit digit
 * complemented, which keeps the sort stable, as CUB's descending sorts are). The caller's
 * temporary storage holds the ping-pong buffers, so a too-small allocation is an error here as it
 * would be a fault on a GPU. Everything runs on the stream's thread, in stream order. */
#ifndef KD_EMU_CUB_DETAIL_RADIX_H
#define KD_EMU_CUB_DETAIL_RADIX_H

#include <string.h>

#include <type_traits>

#include "../../cuda_runtime.h"

namespace cub {
namespace detail {

static const size_t kScanTempBytes = 256;

static inline size_t align_up(size_t n) { return (n + 255) & ~(size_t)255; }

template <typename K, typename V>
static size_t sort_temp_bytes(int64_t n) {
  return align_up(sizeof(K) * (size_t)n) + align_up(sizeof(V) * (size_t)n) + 256;
}

/* Sorts keys/vals[0, n) in place; tk/tv hold n elements each. */
template <typename K, typename V>
static void radix_sort_in_place(K *keys, V *vals, K *tk, V *tv, int64_t n, int begin_bit, int end_bit, bool desc) {
  static_assert(std::is_unsigned<K>::value, "the emulated CUB sorts take unsigned integer keys");
  K *sk = keys, *dk = tk;
  V *sv = vals, *dv = tv;
  for (int shift = begin_bit; shift < end_bit; shift += 8) {
    const int bits = end_bit - shift < 8 ? end_bit - shift : 8;
    const uint64_t mask = (1u << bits) - 1u;
    int64_t count[257];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++) {
      uint64_t d = ((uint64_t)sk[i] >> shift) & mask;
      if (desc) d = mask - d;
      count[d + 1]++;
    }
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (int64_t i = 0; i < n; i++) {
      uint64_t d = ((uint64_t)sk[i] >> shift) & mask;
      if (desc) d = mask - d;
      const int64_t p = count[d]++;
      dk[p] = sk[i];
      dv[p] = sv[i];
    }
    K *t = sk; sk = dk; dk = t;
    V *u = sv; sv = dv; dv = u;
  }
  if (sk != keys) {
    memcpy(keys, sk, sizeof(K) * (size_t)n);
    memcpy(vals, sv, sizeof(V) * (size_t)n);
  }
}

template <typename K, typename V>
static cudaError_t sort_pairs(void *temp, size_t &temp_bytes, const K *keys_in, K *keys_out, const V *vals_in,
                              V *vals_out, int64_t n, int begin_bit, int end_bit, bool desc, cudaStream_t stream) {
  const size_t need = sort_temp_bytes<K, V>(n);
  if (!temp) {
    temp_bytes = need;
    return cudaSuccess;
  }
  if (temp_bytes < need || begin_bit < 0 || end_bit > (int)(8 * sizeof(K)) || begin_bit > end_bit)
    return cudaErrorInvalidValue;
  K *tk = (K *)temp;
  V *tv = (V *)((char *)temp + align_up(sizeof(K) * (size_t)n));
  return kd_emu::enqueue(stream, "cub::DeviceRadixSort::SortPairs", 1, [=]() {
    if (n <= 0) return;
    memmove(keys_out, keys_in, sizeof(K) * (size_t)n);
    memmove(vals_out, vals_in, sizeof(V) * (size_t)n);
    radix_sort_in_place(keys_out, vals_out, tk, tv, n, begin_bit, end_bit, desc);
  });
}

template <typename K, typename V, typename BeginIt, typename EndIt>
static cudaError_t segmented_sort_pairs(void *temp, size_t &temp_bytes, const K *keys_in, K *keys_out,
                                        const V *vals_in, V *vals_out, int64_t n, int64_t segments, BeginIt begins,
                                        EndIt ends, bool desc, cudaStream_t stream) {
  const size_t need = sort_temp_bytes<K, V>(n);
  if (!temp) {
    temp_bytes = need;
    return cudaSuccess;
  }
  if (temp_bytes < need) return cudaErrorInvalidValue;
  K *tk = (K *)temp;
  V *tv = (V *)((char *)temp + align_up(sizeof(K) * (size_t)n));
  return kd_emu::enqueue(stream, "cub::DeviceSegmentedSort::StableSortPairs", 1, [=]() {
    for (int64_t s = 0; s < segments; s++) {
      const int64_t b = (int64_t)begins[s], e = (int64_t)ends[s];
      if (e <= b) continue;
      if (b < 0 || e > n) kd_emu::trap(); /* an out-of-range segment faults, as on a GPU */
      memmove(keys_out + b, keys_in + b, sizeof(K) * (size_t)(e - b));
      memmove(vals_out + b, vals_in + b, sizeof(V) * (size_t)(e - b));
      radix_sort_in_place(keys_out + b, vals_out + b, tk, tv, e - b, 0, (int)(8 * sizeof(K)), desc);
    }
  });
}

}  // namespace detail
}  // namespace cub

#endif
