/* view_backward.c - the kernels of the internal ops that backward formulas of views call (src/ops/oplist/autograd.js): the gradient of slice/select/narrow (zeros of
 * the input's shape with the gradient written into the same view) and of permute (the inverse
 * permutation). They are
 * device-agnostic: everything is other ops through the dispatcher. */
#include <string.h>

#include "ops/kernel.h"
#include "ops/ops_gen.h"

static kd_status kd_zeros_of(const kd_value *sizes, const kd_tensor *like, kd_tensor **out) {
  kd_value a[3] = {*sizes, kd_value_dtype(like->dtype), kd_value_device(kd_tensor_device(like))};
  return kd_call1(KD_OP_zeros, a, out);
}

/* zeros(inputSizes) with grad copied into view_op(zeros, view args...) */
static kd_status kd_scatter_into_view(kd_op_id view_op, kd_value *args, int nview, kd_value *outs) {
  kd_tensor *grad = args[0].v.t, *z = NULL, *v = NULL;
  KD_TRY(kd_zeros_of(&args[1], grad, &z));
  kd_value va[8];
  va[0] = kd_value_tensor(z);
  for (int i = 0; i < nview; i++) va[1 + i] = args[2 + i];
  kd_status st = kd_call1(view_op, va, &v);
  if (st == KD_OK) {
    kd_value ca[2] = {kd_value_tensor(v), kd_value_tensor(grad)};
    kd_value o[KD_OP_MAX_OUTS];
    st = kd_call(KD_OP_copy_, ca, o);
    if (st == KD_OK)
      for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
    kd_tensor_release(v);
  }
  if (st != KD_OK) {
    kd_tensor_release(z);
    return st;
  }
  kd_out_take(outs, 0, z);
  return KD_OK;
}

KD_KERNEL(kd_view_backward) {
  (void)ks;
  kd_tensor *grad = args[0].v.t;
  switch (op->code) {
    case KD_VIEWBW_SLICE: return kd_scatter_into_view(KD_OP_slice, args, 4, outs);
    case KD_VIEWBW_SELECT: return kd_scatter_into_view(KD_OP_select, args, 2, outs);
    case KD_VIEWBW_NARROW: return kd_scatter_into_view(KD_OP_narrow, args, 3, outs);
    case KD_VIEWBW_PERMUTE: {
      const int64_t *dims = args[1].v.ilist.data;
      int n = args[1].v.ilist.n;
      if (n != grad->ndim) return kd_error(KD_ERR_SHAPE, "permuteBackward: dims do not match the gradient");
      int64_t inv[KD_MAX_DIMS];
      bool seen[KD_MAX_DIMS] = {false}; /* a repeated dim would leave part of inv unset */
      for (int i = 0; i < n; i++) {
        int d;
        KD_TRY(kd_shape_wrap_dim(dims[i], n, &d));
        if (seen[d]) return kd_error(KD_ERR_INVALID_ARGUMENT, "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        inv[d] = i;
      }
      kd_value a[2] = {kd_value_tensor(grad), kd_value_intlist(inv, n)};
      kd_tensor *r = NULL;
      KD_TRY(kd_call1(KD_OP_permute, a, &r));
      kd_out_take(outs, 0, r);
      return KD_OK;
    }
  }
  return kd_error(KD_ERR_INTERNAL, "unknown view backward");
}
