/* ew_codes.h - what the pointwise CPU kernels (unary.c, binary.c, ternary.c) and the device
 * kernels (cuda/ops_unary.cu, ops_binary.cu, ops_ternary.cu) share: the operation a prepared
 * pointwise launch performs. Plain C, included by gcc and nvcc.
 *
 * Note [Device kernels through the CPU kernels]
 * A pointwise CPU kernel does all of an op's device-independent work (argument and dtype
 * checks with PyTorch's messages, type promotion, the compute dtype, casting operands,
 * allocating the output on the input's device, in-place write-back) and ends with ONE
 * iterator pass. kd_cpu_iter_run (cpu_common.c) runs that pass with the CPU loop when the
 * output lives on the CPU, and otherwise hands the built iterator plus a kd_ew_desc (family,
 * code, parameters) to the device hook kd_cpu_device_ew, which the CUDA bridge sets when
 * libkindling_cuda.so loads. So the same kernel function is registered at KD_KEY_CPU and
 * KD_KEY_CUDA and the device side only launches. The operand dtypes the device sees are those
 * of the CPU loops: every input already in the compute dtype (where's condition: bool/uint8),
 * the output in the compute dtype or bool. */
#ifndef KD_EW_CODES_H
#define KD_EW_CODES_H

#include <stdint.h>

/* Families: which loop table the pass would use on the CPU. */
enum kd_ew_family {
  KD_EW_UNARY = 1,   /* (out, x): codes KD_UNARY_* and KD_UX_*; out is x's dtype or bool      */
  KD_EW_BINARY,      /* (out, a, b): codes KD_BINARY_* and KD_BX_*; out is a's dtype or bool    */
  KD_EW_TERNARY,     /* (out, a, b, c): codes KD_TERNARY_* and KD_TX_*; one dtype               */
  KD_EW_WHERE,       /* (out, cond, x, y): out = cond ? x : y, moved as bits                    */
  KD_EW_LOGICAL_NOT, /* (out bool, x any dtype)                                                 */
  KD_EW_BITWISE_NOT, /* (out, x) integer or bool                                                */
  KD_EW_SPECIAL,     /* (out, x) or (out, a, b): codes KD_SPECIAL_* and KD_SX_* (src/cpu/special.c);
                        out is the inputs' dtype (int32 for KD_SX_FREXP_EXPONENT)               */
};

/* Codes beyond the op list's: variants a kernel picks from the arguments. */
enum { KD_UX_ROUND_DEC = 100, KD_UX_GELU_TANH };
enum {
  KD_BX_DIV_TRUNC = 100, KD_BX_DIV_FLOOR, KD_BX_ADD1, KD_BX_SUB1,
  KD_BX_POW_SQUARE, KD_BX_POW_CUBE, KD_BX_POW_SQRT, KD_BX_POW_RSQRT, KD_BX_POW_RECIP, KD_BX_POW_RECIP_SQUARE,
  KD_BX_THRESHOLD_BW, /* thresholdBackward (src/cpu/autograd_fused.c): b <= threshold ? 0 : a */
};
enum { KD_TX_LERP_SCALAR = 100 };
enum {
  KD_SX_FREXP_EXPONENT = 100, /* frexp's second pass: the exponent as int32                          */
  KD_SX_POLYNOMIAL,           /* (out, x, n): the orthogonal polynomial of kind p[0] (special_math.h) */
};

/* One pointwise launch. Parameters by family:
 *   unary:   p[0..2] = kd_unary_ctx p0..p2
 *   binary:  p[0] = alpha as double, i[0] = alpha as int64; p[1] rtol, p[2] atol, i[1] equal_nan;
 *            KD_BX_THRESHOLD_BW: the threshold in p[0] and, converted to the integer dtype, i[0]
 *   ternary: p[0] = value (addcmul/addcdiv) or lerp's number weight, i[0] = value as int64
 *   special: p[0] = polygamma's n, logit's eps (< 0: none), or KD_SX_POLYNOMIAL's kind */
typedef struct kd_ew_desc {
  int32_t family;
  int32_t code;
  double p[4];
  int64_t i[2];
} kd_ew_desc;

/* Device results reported back by a launch (flags of the hook). */
enum { KD_EW_FLAG_ZERO_DIV = 1 }; /* an integer division by zero: "ZeroDivisionError" */

#endif
