/* shape.c - shape arithmetic (see shape.h). */
#include "core/shape.h"

#include <stdio.h>

#include "core/tensor.h"

void kd_shape_contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides_out) {
  /* The product can only leave int64 for an empty shape ([0, 2^62, 4]), whose strides are never
   * used: it wraps in uint64 (defined, and the strides PyTorch reports for such shapes). */
  uint64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides_out[i] = (int64_t)s;
    s *= (uint64_t)(sizes[i] > 1 ? sizes[i] : 1);
  }
}

bool kd_shape_is_contiguous(const int64_t *sizes, const int64_t *strides, int ndim) {
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

int64_t kd_shape_numel(const int64_t *sizes, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= sizes[i];
  return n;
}

kd_status kd_shape_numel_checked(const int64_t *sizes, int ndim, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (kd_mul_overflows(n, sizes[i], &n)) return kd_error(KD_ERR_INVALID_ARGUMENT, "numel: integer multiplication overflow");
  *out = n;
  return KD_OK;
}

kd_status kd_shape_extent(const int64_t *sizes, const int64_t *strides, int ndim, int64_t offset, int64_t *lowest,
                          int64_t *highest) {
  int64_t lo = offset, hi = offset;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] == 0) {
      *lowest = offset;
      *highest = offset - 1;
      return KD_OK;
    }
  }
  for (int i = 0; i < ndim; i++) {
    int64_t span;
    bool over = kd_mul_overflows(sizes[i] - 1, strides[i], &span);
    if (!over) over = span < 0 ? kd_add_overflows(lo, span, &lo) : kd_add_overflows(hi, span, &hi);
    if (over) {
      char a[256], b[256];
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed with sizes=%s and strides=%s",
                      kd_shape_format(sizes, ndim, a, sizeof a), kd_shape_format(strides, ndim, b, sizeof b));
    }
  }
  *lowest = lo;
  *highest = hi;
  return KD_OK;
}

kd_status kd_shape_wrap_dim(int64_t dim, int ndim, int *out) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return kd_error(KD_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                    (long long)-n, (long long)(n - 1), (long long)dim);
  *out = (int)(dim < 0 ? dim + n : dim);
  return KD_OK;
}

kd_status kd_shape_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout) {
  int n = na > nb ? na : nb;
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "broadcast result has more than %d dims", KD_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return kd_error(KD_ERR_SHAPE,
                      "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                      (long long)sa, (long long)sb, i);
    out[i] = sa == 1 ? sb : sa;
  }
  *nout = n;
  return KD_OK;
}

const char *kd_shape_format(const int64_t *sizes, int ndim, char *buf, int n) {
  int pos = snprintf(buf, n, "[");
  for (int i = 0; i < ndim && pos < n; i++) pos += snprintf(buf + pos, n - pos, i ? ", %lld" : "%lld", (long long)sizes[i]);
  if (pos < n) snprintf(buf + pos, n - pos, "]");
  return buf;
}
