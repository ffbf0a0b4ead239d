/* device_op_ptrs.h - launching a device op whose operands are plain buffers (the kinds 40..63 of
 * cpu/device_op.h: sort, unique, median, convolution, pooling). Those kernels need whole rows or
 * windows, so there is no elementwise iteration to hand over: the CPU kernel makes its buffers
 * contiguous, and the launch carries their device pointers as the operands of an iteration with
 * no dims (kd_cuda_op.data[k]) plus the family's sizes in op->i[] / op->d[]. */
#ifndef KD_CPU_DEVICE_OP_PTRS_H
#define KD_CPU_DEVICE_OP_PTRS_H

#include "cpu/device_op.h"

/* Runs op (kind, code, dtype, i[], d[] set) on dev with operands ptrs[0..n) of dtypes dts[]
 * (a NULL pointer: an absent optional operand). */
static inline kd_status kd_dev_op_run_ptrs(kd_device dev, kd_dev_op *op, int n, void *const *ptrs, const kd_dtype *dts) {
  if (n < 1 || n > KD_ITER_MAX_OPS) return kd_error(KD_ERR_INTERNAL, "device op: %d operands", n);
  static const int64_t one = 1;
  kd_iter it;
  kd_iter_operand ops[KD_ITER_MAX_OPS];
  memset(&it, 0, sizeof it);
  memset(ops, 0, sizeof ops);
  it.nops = n;
  it.ndim = 0;
  it.numel = 1;
  for (int k = 0; k < n; k++) {
    it.data[k] = (char *)ptrs[k];
    it.dtypes[k] = dts[k];
    ops[k].data = (char *)ptrs[k];
    ops[k].dtype = dts[k];
    ops[k].sizes = &one; /* a buffer, not a one-element scalar operand */
  }
  op->it = &it;
  op->ops = ops;
  kd_status st = kd_cpu_device_run(dev, op);
  op->it = NULL;
  op->ops = NULL;
  return st;
}

/* A tensor's device pointer as an operand (NULL for NULL). */
static inline void *kd_dev_ptr(const kd_tensor *t) { return t ? (void *)kd_tensor_data(t) : NULL; }

/* The unique kinds (KD_DEV_OP_UNIQUE sorted, KD_DEV_OP_UNIQUE_CONSECUTIVE): the n contiguous
 * m-element rows of x (dtype dt) -> the distinct rows in u, each row's group in inv (int64), the
 * group sizes in cnt (int64); *groups = their number. */
static inline kd_status kd_dev_unique_rows(kd_device dev, int32_t kind, kd_dtype dt, int64_t n, int64_t m,
                                           const kd_tensor *x, kd_tensor *u, kd_tensor *inv, kd_tensor *cnt,
                                           int64_t *groups) {
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.dtype = dt;
  op.i[0] = n;
  op.i[1] = m;
  void *p[4] = {kd_dev_ptr(x), kd_dev_ptr(u), kd_dev_ptr(inv), kd_dev_ptr(cnt)};
  kd_dtype dts[4] = {dt, dt, KD_DTYPE_I64, KD_DTYPE_I64};
  kd_status st = kd_dev_op_run_ptrs(dev, &op, 4, p, dts);
  *groups = op.result[0];
  return st;
}

#endif
