/* layout.cu - host-side helpers of the kernel files: dtype sizes, operand validation, dim
 * coalescing and launch sizes.
 *
 * Note [CUDA layouts]
 * Kernels see at most two operands (dst, src) over one shape. Before a launch the shape is
 * simplified: size-1 dims are dropped and neighbouring dims merge when every operand is
 * contiguous across them (stride[outer] == stride[inner] * size[inner]). A contiguous copy
 * becomes one dim with stride 1 on both sides, which the kernels run as a flat loop; anything
 * else runs the strided kernel, which turns a linear index into per-operand offsets with one
 * div/mod per remaining dim. Indices and offsets are 64-bit throughout. */
#include "kd_cuda_internal.h"
#include "core/dtype.h"

static_assert(KD_DTYPE_COUNT == 10, "cuda/: update the dtype switches for the new dtype");

size_t kd_cu_dtype_size(int32_t dtype) {
  switch (dtype) {
    case KD_DTYPE_F32: return 4;
    case KD_DTYPE_F64: return 8;
    case KD_DTYPE_F16: return 2;
    case KD_DTYPE_BF16: return 2;
    case KD_DTYPE_I8: return 1;
    case KD_DTYPE_U8: return 1;
    case KD_DTYPE_I16: return 2;
    case KD_DTYPE_I32: return 4;
    case KD_DTYPE_I64: return 8;
    case KD_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

static kd_cuda_status kd_cu_check_array(const kd_cuda_array *a, const char *what) {
  if (!a) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: null array", what);
  if (kd_cu_dtype_size(a->dtype) == 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", what, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > KD_CUDA_MAX_DIMS)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: ndim %d outside [0, %d]", what, (int)a->ndim,
                       KD_CUDA_MAX_DIMS);
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] < 0)
      return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: negative size %lld at dim %d", what,
                         (long long)a->sizes[d], d);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_layout_build(const kd_cuda_array *a, const kd_cuda_array *b, kd_cu_layout *out, int64_t *numel) {
  KD_CU_TRY(kd_cu_check_array(a, "destination"));
  if (b) {
    KD_CU_TRY(kd_cu_check_array(b, "source"));
    if (b->ndim != a->ndim)
      return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "copy: source has %d dims, destination %d", (int)b->ndim,
                         (int)a->ndim);
    for (int d = 0; d < a->ndim; d++)
      if (b->sizes[d] != a->sizes[d])
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "copy: size %lld of the source at dim %d is not %lld",
                           (long long)b->sizes[d], d, (long long)a->sizes[d]);
  }
  const int nops = b ? 2 : 1;
  const kd_cuda_array *ops[2] = {a, b};
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->sizes[d];
  *numel = n;
  if (n == 0) return KD_CUDA_OK;
  for (int k = 0; k < nops; k++)
    if (!ops[k]->data) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "null data pointer for a non-empty array");

  /* Walk from the innermost dim outwards, merging into the current outermost kept dim.
   * Built inner-first into tmp, then reversed into out (outer-first). */
  int64_t sizes[KD_CUDA_MAX_DIMS], strides[2][KD_CUDA_MAX_DIMS];
  int m = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    int64_t s = a->sizes[d];
    if (s == 1) continue;
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < nops; k++)
        if (ops[k]->strides[d] != strides[k][m - 1] * sizes[m - 1]) merge = false;
      if (merge) {
        sizes[m - 1] *= s;
        continue;
      }
    }
    sizes[m] = s;
    for (int k = 0; k < nops; k++) strides[k][m] = ops[k]->strides[d];
    m++;
  }
  if (m == 0) { /* a single element */
    sizes[0] = 1;
    strides[0][0] = strides[1][0] = 1;
    m = 1;
  }
  out->ndim = m;
  for (int i = 0; i < m; i++) {
    out->sizes[i] = sizes[m - 1 - i];
    out->strides[0][i] = strides[0][m - 1 - i];
    out->strides[1][i] = nops > 1 ? strides[1][m - 1 - i] : 0;
  }
  return KD_CUDA_OK;
}

unsigned kd_cu_grid(int device, int64_t n) {
  int64_t blocks = (n + KD_CU_THREADS - 1) / KD_CU_THREADS;
  int sms = kd_cu_sm_count(device);
  int64_t cap = (int64_t)(sms > 0 ? sms : 128) * 32; /* enough blocks to fill the GPU; threads loop */
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return (unsigned)blocks;
}
