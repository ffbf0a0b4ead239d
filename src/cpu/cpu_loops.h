/* cpu_loops.h - the one dtype-dispatch mechanism shared by every CPU kernel file, plus the
 * helpers kernels share (casting operands to a compute dtype, PyTorch dtype names).
 *
 * Note [CPU dtype rows]
 * C has no templates, so kernels are instantiated once per dtype with X-macros. Each row
 *   X(SFX, DT, T, CT, LD, ST, MS, K, UT)
 * describes one dtype:
 *   SFX  suffix for generated names (f32, i64, ...)     DT  the kd_dtype
 *   T    storage type (uint16_t for float16/bfloat16)   CT  compute type (float for both halves)
 *   LD   T -> CT conversion                             ST  CT -> T conversion
 *   MS   libm suffix for CT ("f" for float, empty for double; unused by ints)
 *   K    kind: F (floating), I (integer), B (bool)
 *   UT   wrapping arithmetic type: unsigned for integers, so overflow wraps as in PyTorch
 *        instead of being undefined behaviour (bool too: true + true -> 2 -> true); CT for floats.
 * A kernel writes one macro taking a row and expands it with KD_ROWS_ALL (or a kind list)
 * to get one loop per dtype, and a table indexed by kd_dtype to pick it:
 *   #define DEF(SFX, DT, T, CT, LD, ST, MS, K, UT) static void my_loop_##SFX(...) {...}
 *   KD_ROWS_ALL(DEF)
 *   #define ENTRY(SFX, DT, ...) [DT] = my_loop_##SFX,
 *   static const kd_iter_loop_fn my_loops[KD_DTYPE_COUNT] = { KD_ROWS_ALL(ENTRY) };
 * Inner loops take (data, strides, n) from kd_iter_for_each (see Note [Strided iteration])
 * and use the KD_LOOP* macros below, which detect the contiguous case by its strides
 * (stride == sizeof(T)) and then run a plain indexed loop gcc vectorizes.
 *
 * Mixed dtypes: operands whose dtype differs from the op's compute dtype are converted
 * first with kd_cpu_cast (a contiguous temporary, as PyTorch's CPU TensorIterator does), so
 * loops only ever see one dtype; a wrapped number (JS number) is converted once into a
 * 0-d operand. The same-dtype case allocates nothing. */
#ifndef KD_CPU_LOOPS_H
#define KD_CPU_LOOPS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ops/kernel.h"

#define KD_LD_ID(x) (x)
#define KD_ST_ID(x) (x)
#define KD_LD_BOOL(x) ((bool)((x) != 0))
#define KD_ST_BOOL(x) ((uint8_t)((x) != 0))

#define KD_ROWS_FLOAT(X)                                                                      \
  X(f32, KD_DTYPE_F32, float, float, KD_LD_ID, KD_ST_ID, f, F, float)                         \
  X(f64, KD_DTYPE_F64, double, double, KD_LD_ID, KD_ST_ID, , F, double)                       \
  X(f16, KD_DTYPE_F16, uint16_t, float, kd_f16_to_f32, kd_f32_to_f16, f, F, float)            \
  X(bf16, KD_DTYPE_BF16, uint16_t, float, kd_bf16_to_f32, kd_f32_to_bf16, f, F, float)
#define KD_ROWS_INT(X)                                                                        \
  X(i8, KD_DTYPE_I8, int8_t, int8_t, KD_LD_ID, KD_ST_ID, , I, uint32_t)                       \
  X(u8, KD_DTYPE_U8, uint8_t, uint8_t, KD_LD_ID, KD_ST_ID, , I, uint32_t)                     \
  X(i16, KD_DTYPE_I16, int16_t, int16_t, KD_LD_ID, KD_ST_ID, , I, uint32_t)                   \
  X(i32, KD_DTYPE_I32, int32_t, int32_t, KD_LD_ID, KD_ST_ID, , I, uint32_t)                   \
  X(i64, KD_DTYPE_I64, int64_t, int64_t, KD_LD_ID, KD_ST_ID, , I, uint64_t)
#define KD_ROWS_BOOL(X) X(b8, KD_DTYPE_BOOL, uint8_t, bool, KD_LD_BOOL, KD_ST_BOOL, , B, uint32_t)
#define KD_ROWS_ALL(X) KD_ROWS_FLOAT(X) KD_ROWS_INT(X) KD_ROWS_BOOL(X)

/* A table entry [DT] = PREFIX##SFX, for `static const kd_iter_loop_fn t[] = {KD_ROWS_ALL(..)}`. */
#define KD_LOOP_ENTRY(PREFIX, SFX, DT) [DT] = PREFIX##SFX,

/* Converts a value of kind SK (F, I or B, already loaded as its CT) to destination row
 * (DK, DT_, DCT, DST): float -> int saturates and maps NaN to 0 (no undefined behaviour),
 * int -> narrower int wraps, anything -> bool is != 0. */
static inline int64_t kd_cpu_f2i(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}
#define KD_CAST_F_F(DT_, DCT, DST, x) DST((DCT)(x))
#define KD_CAST_F_I(DT_, DCT, DST, x) DST((DCT)(x))
#define KD_CAST_F_B(DT_, DCT, DST, x) DST((DCT)(x))
#define KD_CAST_I_F(DT_, DCT, DST, x) ((DT_)kd_cpu_f2i((double)(x)))
#define KD_CAST_I_I(DT_, DCT, DST, x) ((DT_)(x))
#define KD_CAST_I_B(DT_, DCT, DST, x) ((DT_)(x))
#define KD_CAST_B_F(DT_, DCT, DST, x) ((uint8_t)((x) != 0))
#define KD_CAST_B_I(DT_, DCT, DST, x) ((uint8_t)((x) != 0))
#define KD_CAST_B_B(DT_, DCT, DST, x) ((uint8_t)((x) != 0))
#define KD_CAST(DK, SK, DT_, DCT, DST, x) KD_CAST_##DK##_##SK(DT_, DCT, DST, x)

/* x < 0 for any integer type without -Wtype-limits noise on unsigned ones. */
static inline bool kd_cpu_is_neg(int64_t v) { return v < 0; }
#define KD_IS_NEG(x) kd_cpu_is_neg((int64_t)(x))

/* ---- inner-loop bodies: `data`, `strides` and `n` are the loop function's parameters ---- */

/* out[i] = EXPR with `x` the CT value of the input (operands: out OT via OST, in T via LD). */
#define KD_LOOP1(OT, T, CT, LD, OST, EXPR)                                                    \
  do {                                                                                        \
    char *po_ = data[0], *px_ = data[1];                                                      \
    const int64_t so_ = strides[0], sx_ = strides[1];                                         \
    if (so_ == (int64_t)sizeof(OT) && sx_ == (int64_t)sizeof(T)) {                            \
      OT *o_ = (OT *)po_;                                                                     \
      const T *xs_ = (const T *)px_;                                                          \
      for (int64_t i_ = 0; i_ < n; i_++) { CT x = LD(xs_[i_]); o_[i_] = OST(EXPR); }          \
    } else {                                                                                  \
      for (int64_t i_ = 0; i_ < n; i_++) {                                                    \
        CT x = LD(*(const T *)(px_ + i_ * sx_));                                              \
        *(OT *)(po_ + i_ * so_) = OST(EXPR);                                                  \
      }                                                                                       \
    }                                                                                         \
  } while (0)

/* out[i] = EXPR with `a`, `b` the CT values of the two inputs. Fast paths: all contiguous,
 * and contiguous with one side a broadcast scalar (stride 0, loaded once). */
#define KD_LOOP2(OT, T, CT, LD, OST, EXPR)                                                    \
  do {                                                                                        \
    char *po_ = data[0], *pa_ = data[1], *pb_ = data[2];                                      \
    const int64_t so_ = strides[0], sa_ = strides[1], sb_ = strides[2];                       \
    if (so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(T) && sb_ == (int64_t)sizeof(T)) { \
      OT *o_ = (OT *)po_;                                                                     \
      const T *as_ = (const T *)pa_, *bs_ = (const T *)pb_;                                   \
      if ((void *)o_ == (void *)as_) { /* in place: no aliasing check needed to vectorize */  \
        for (int64_t i_ = 0; i_ < n; i_++) { CT a = LD(o_[i_]), b = LD(bs_[i_]); o_[i_] = OST(EXPR); } \
      } else {                                                                                \
        for (int64_t i_ = 0; i_ < n; i_++) { CT a = LD(as_[i_]), b = LD(bs_[i_]); o_[i_] = OST(EXPR); } \
      }                                                                                       \
    } else if (so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(T) && sb_ == 0) {         \
      OT *o_ = (OT *)po_;                                                                     \
      const T *as_ = (const T *)pa_;                                                          \
      const CT b = LD(*(const T *)pb_);                                                       \
      for (int64_t i_ = 0; i_ < n; i_++) { CT a = LD(as_[i_]); o_[i_] = OST(EXPR); }          \
    } else if (so_ == (int64_t)sizeof(OT) && sa_ == 0 && sb_ == (int64_t)sizeof(T)) {         \
      OT *o_ = (OT *)po_;                                                                     \
      const T *bs_ = (const T *)pb_;                                                          \
      const CT a = LD(*(const T *)pa_);                                                       \
      for (int64_t i_ = 0; i_ < n; i_++) { CT b = LD(bs_[i_]); o_[i_] = OST(EXPR); }          \
    } else {                                                                                  \
      for (int64_t i_ = 0; i_ < n; i_++) {                                                    \
        CT a = LD(*(const T *)(pa_ + i_ * sa_)), b = LD(*(const T *)(pb_ + i_ * sb_));        \
        *(OT *)(po_ + i_ * so_) = OST(EXPR);                                                  \
      }                                                                                       \
    }                                                                                         \
  } while (0)

/* ---- shared helpers (cpu_common.c) ---- */

/* PyTorch's name for a dtype in messages: Float, Double, Half, BFloat16, Char, Byte, Short,
 * Int, Long, Bool. */
const char *kd_cpu_torch_name(kd_dtype t);

/* Writes src (broadcast to dst's shape) into dst, converting dtypes: THE conversion loop.
 * Both on the CPU; no overlap handling (see kd_cpu_copy for that). In copy.c. */
kd_status kd_cpu_copy_into(kd_tensor *dst, const kd_tensor *src);
/* The last step of a pointwise kernel: for an in-place op computed into a separate `out`, copies
 * it back into self; then sets outs[0] (taking over out's reference), or releases out on error. */
kd_status kd_cpu_finish_out(kd_status st, bool inplace, kd_tensor *self, kd_tensor *out, kd_value *outs);

/* `t` as a tensor of dtype `dt`: t itself (retained) when it already has that dtype (and is
 * contiguous, if `contiguous`), else a new contiguous converted copy. Release the result. */
kd_status kd_cpu_cast(kd_tensor *t, kd_dtype dt, bool contiguous, kd_tensor **out);
/* The tensor a loop reads as dtype dt: t itself, borrowed (*tmp stays NULL; no reference is
 * taken, which on the per-op path of small tensors saves two atomic updates per operand), or
 * a converted temporary in *tmp that the caller releases. */
kd_status kd_cpu_operand_as(kd_tensor *t, kd_dtype dt, kd_tensor **tmp, kd_tensor **use);

/* In-place ops: PyTorch refuses to write where several elements share one memory location
 * (a stride-0 dim of size > 1). */
kd_status kd_cpu_check_no_internal_overlap(const kd_tensor *t);

/* The check and message of in-place ops whose result dtype cannot be written into self:
 * "result type Float can't be cast to the desired output type Long". */
kd_status kd_cpu_check_inplace_cast(kd_dtype result, kd_dtype self);

/* PyTorch's checked scalar conversion (fill_, where with a number, full): a value outside
 * the dtype's range is "value cannot be converted to type int8_t without overflow". */
kd_status kd_cpu_scalar_check_fits(kd_scalar s, kd_dtype dt);

/* The result of unique / uniqueConsecutive: outs[0] = the tensor list [values, inverse (when
 * want_inv), counts (when want_cnt)]. Takes over the three references (releasing the unwanted
 * ones, or all of them when st, the kernel's status so far, or the list's allocation fails). */
kd_status kd_cpu_unique_result(kd_status st, kd_tensor *values, kd_tensor *inverse, kd_tensor *counts, bool want_inv,
                               bool want_cnt, kd_value *outs);

/* Whether two tensors' byte ranges in one storage may intersect (a conservative test). */
bool kd_cpu_may_overlap(const kd_tensor *a, const kd_tensor *b);

/* An operand for a 0-d value held in `buf` (at least 8 bytes) of dtype dt. */
static inline kd_iter_operand kd_cpu_scalar_operand(void *buf, kd_dtype dt) {
  kd_iter_operand op;
  op.data = (char *)buf;
  op.dtype = dt;
  op.ndim = 0;
  op.sizes = NULL;
  op.strides = NULL;
  return op;
}

/* The device of a factory op's result (CPU kernels: the device argument, else the CPU). */
static inline kd_device kd_cpu_factory_device(const kd_op_info *op, const kd_value *args) {
  return op->device_arg >= 0 ? kd_arg_device_or(&args[op->device_arg], kd_device_cpu()) : kd_device_cpu();
}

/* ---- device launches (Note [Device kernels through the CPU kernels] in ops/ew_codes.h) ---- */
#include "ops/ew_codes.h"

/* The device hook: runs one built pointwise pass on `dev`. ops[] are the operands given to
 * kd_iter_build; an operand with sizes == NULL is a host scalar (kd_cpu_scalar_operand) whose
 * value the hook passes by value. NULL until a device backend registers itself. */
typedef kd_status (*kd_cpu_device_ew_fn)(kd_device dev, const kd_ew_desc *d, const kd_iter *it,
                                         const kd_iter_operand *ops);
extern kd_cpu_device_ew_fn kd_cpu_device_ew;

/* The last step of a pointwise kernel: the CPU loop when `dev` is the CPU, else the device
 * hook (KD_ERR_NOT_SUPPORTED when the device has none). */
kd_status kd_cpu_iter_run(kd_device dev, const kd_iter *it, const kd_iter_operand *ops, kd_iter_loop_fn loop,
                          void *ctx, const kd_ew_desc *d);

/* The device hook of matrix products (matmul.c's last step for device tensors): c (contiguous
 * [batch, m, n]) = a @ b, operands with element strides (batch, row, column). */
typedef kd_status (*kd_cpu_device_mm_fn)(kd_device dev, kd_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                                         const char *a, int64_t a_bs, int64_t a_rs, int64_t a_cs, const char *b,
                                         int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c);
extern kd_cpu_device_mm_fn kd_cpu_device_mm;

/* A 0-d tensor's value on the host, wherever the tensor lives. */
kd_status kd_cpu_item(const kd_tensor *t, kd_scalar *out);

#endif
