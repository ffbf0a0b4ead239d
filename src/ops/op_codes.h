/* op_codes.h - the `code` values of the op list: which operation a shared kernel performs
 * (one kd_cpu_unary for all unary ops, one kd_cpu_binary for all binary ops, ...). */
#ifndef KD_OP_CODES_H
#define KD_OP_CODES_H

enum kd_unary_code {
  KD_UNARY_NEG = 1, KD_UNARY_ABS, KD_UNARY_EXP, KD_UNARY_LOG, KD_UNARY_SQRT, KD_UNARY_RELU,
  KD_UNARY_SIGMOID, KD_UNARY_TANH,
};
enum kd_binary_code {
  KD_BINARY_ADD = 1, KD_BINARY_SUB, KD_BINARY_MUL, KD_BINARY_DIV, KD_BINARY_POW,
  KD_BINARY_EQ, KD_BINARY_NE, KD_BINARY_LT, KD_BINARY_LE, KD_BINARY_GT, KD_BINARY_GE,
};
enum kd_reduce_code { KD_REDUCE_SUM = 1, KD_REDUCE_MEAN, KD_REDUCE_MAX, KD_REDUCE_MIN, KD_REDUCE_ARGMAX };
enum kd_fill_code { KD_FILL_ZEROS = 1, KD_FILL_ONES, KD_FILL_VALUE };
enum kd_like_code {
  KD_LIKE_EMPTY = 1, KD_LIKE_ZEROS, KD_LIKE_ONES, KD_LIKE_FULL, KD_LIKE_RAND, KD_LIKE_RANDN, KD_LIKE_RANDINT,
};
enum kd_random_code { KD_RANDOM_UNIFORM = 1, KD_RANDOM_NORMAL, KD_RANDOM_INT };

#endif
