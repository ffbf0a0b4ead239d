/* kd_cuda_api.h - the C ABI between kindling.node and libkindling_cuda.so.
 *
 * kindling.node never links CUDA. src/cuda_bridge/bridge.c dlopens libkindling_cuda.so on
 * first CUDA use, looks up the one exported symbol
 *     const kd_cuda_api *kd_cuda_get_api(int abi_version);
 * and talks to the library only through the table of function pointers it returns. Every
 * other symbol of the library is hidden. The header is plain C (no CUDA headers), included
 * by bridge.c (gcc) and by the .cu files of cuda/ (nvcc).
 *
 * Versioning: any change to this file's types or to the order/meaning of the table's slots
 * bumps KD_CUDA_ABI_VERSION. kd_cuda_get_api returns NULL for any version but its own, so an
 * addon and a library from different builds refuse each other cleanly instead of crashing.
 *
 * Errors: every fallible entry returns a kd_cuda_status and leaves a human-readable message in
 * thread-local storage, read with last_error() (the same model as core/status.h). Nothing in
 * the library exits or aborts. Out of memory is its own code (KD_CUDA_ERR_OOM). A missing
 * driver or GPU is reported by init() and by every entry point called after a failed init.
 *
 * Devices: entries that take a `device` run on that device and restore the calling thread's
 * current device afterwards; the current device itself (set_device) is per host thread, as in
 * the CUDA runtime. Work is enqueued on the device's current stream (per host thread; the legacy
 * default stream unless set_current_stream changed it), in issue order. */
#ifndef KD_CUDA_API_H
#define KD_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KD_CUDA_ABI_VERSION 8
#define KD_CUDA_MAX_DIMS 16 /* == KD_MAX_DIMS of core/tensor.h */

typedef enum kd_cuda_status {
  KD_CUDA_OK = 0,
  KD_CUDA_ERR_NO_DRIVER,        /* libcuda.so missing, or a driver too old for this runtime      */
  KD_CUDA_ERR_NO_DEVICE,        /* a driver, but no usable GPU (none, CUDA_VISIBLE_DEVICES, ...) */
  KD_CUDA_ERR_INVALID_ARGUMENT, /* bad device index, dtype, ndim, null pointer, ...               */
  KD_CUDA_ERR_OOM,              /* device memory exhausted                                      */
  KD_CUDA_ERR_RUNTIME,          /* any other CUDA runtime error (message names it)              */
  KD_CUDA_ERR_NOT_SUPPORTED,    /* ABI 2: an op or dtype this library has no kernel for         */
  KD_CUDA_STATUS_COUNT
} kd_cuda_status;

typedef struct kd_cuda_device_props {
  char name[256];               /* "NVIDIA H100 80GB HBM3" */
  uint64_t total_memory;        /* bytes */
  int32_t major, minor;         /* compute capability */
  int32_t multiprocessor_count;
} kd_cuda_device_props;

/* A strided view of device memory: element (i0, ..., i{ndim-1}) lives at
 *   (char *)data + (offset + sum_k i_k * strides[k]) * element_size(dtype).
 * dtype is a kd_dtype value (core/dtype.h): 0 float32, 1 float64, 2 float16, 3 bfloat16,
 * 4 int8, 5 uint8, 6 int16, 7 int32, 8 int64, 9 bool. Strides are in elements and may be 0
 * (broadcast) or negative; ndim 0 is a single element. */
typedef struct kd_cuda_array {
  void *data;                   /* storage base pointer */
  int32_t dtype;
  int32_t ndim;
  int64_t offset;               /* in elements */
  int64_t sizes[KD_CUDA_MAX_DIMS];
  int64_t strides[KD_CUDA_MAX_DIMS];
} kd_cuda_array;

/* One pointwise launch (ops_unary.cu, ops_binary.cu, ops_ternary.cu): the operation (a
 * kd_ew_desc of src/ops/ew_codes.h: family, code, parameters) and the iteration built by the
 * host's kd_iter_build (core/iter.h): dim 0 innermost, byte strides, operand 0 the output.
 * An operand with data NULL is a host scalar whose bits (its dtype's, little-endian) are in
 * scalar[k]. See Note [CUDA iteration] in iter.cuh. */
#define KD_CUDA_EW_MAX_OPS 4
typedef struct kd_cuda_ew {
  int32_t family, code;
  double p[4];
  int64_t ip[2];
  int32_t nops, ndim;
  int64_t numel;
  int64_t shape[KD_CUDA_MAX_DIMS];
  int64_t strides[KD_CUDA_EW_MAX_OPS][KD_CUDA_MAX_DIMS];
  void *data[KD_CUDA_EW_MAX_OPS];
  int32_t dtypes[KD_CUDA_EW_MAX_OPS];
  uint64_t scalar[KD_CUDA_EW_MAX_OPS];
} kd_cuda_ew;

/* One batched matrix product (ops_matmul.cu): c[b] = a[b] @ b[b] for b < batch, a (m x k) and
 * b (k x n) with element strides (batch, row, column; any, 0 for broadcast), c contiguous
 * [batch, m, n]. allow_tf32: float32 may use TF32 tensor cores. */
typedef struct kd_cuda_gemm {
  int32_t dtype, allow_tf32;
  int64_t batch, m, n, k;
  const void *a;
  int64_t a_bs, a_rs, a_cs;
  const void *b;
  int64_t b_bs, b_rs, b_cs;
  void *c;
} kd_cuda_gemm;

/* ==== version 4 types: reductions, row ops (softmax, scans, layer norm), random ==== */

/* One reduction (ops_reduce.cu). `code` is a KD_REDUCE_* op code (src/ops/op_codes.gen.h);
 * arg: 1 for max.dim/min.dim/argmax/argmin (out = values in in_dtype, or NULL for argmax;
 * out2 = int64 indices; exactly one reduced dim). The input (already in the compute dtype,
 * any strides) is `in` (pointing at its first element) with kept dims keep_* in the output's
 * row-major order (outermost first) and reduced dims red_*, element strides. out (out_dtype)
 * and out2 (out_dtype: the mean of varMean/stdMean) are contiguous with onumel elements.
 * p: norm's order; correction: var/std's. */
typedef struct kd_cuda_reduce {
  int32_t code, arg;
  int32_t in_dtype, out_dtype;
  int32_t nkeep, nred;
  double p, correction;
  int64_t onumel, count;
  int64_t keep_sizes[KD_CUDA_MAX_DIMS], keep_strides[KD_CUDA_MAX_DIMS];
  int64_t red_sizes[KD_CUDA_MAX_DIMS], red_strides[KD_CUDA_MAX_DIMS];
  const void *in;
  void *out, *out2;
} kd_cuda_reduce;

/* Row ops over contiguous tensors seen as [outer, len, inner] (ops_softmax.cu, ops_scan.cu,
 * ops_norm.cu). Softmax/logSoftmax and layer norm: dtype float32 or float64 for every operand;
 * scans: any dtype (x and y in it). Layer norm: rows = outer (inner 1), n = len; w, b may be
 * NULL; mean/rstd one value per row. Backward: g the incoming gradient, y = dx. */
enum {
  KD_CUDA_ROWS_SOFTMAX = 1, KD_CUDA_ROWS_LOG_SOFTMAX, KD_CUDA_ROWS_CUMSUM, KD_CUDA_ROWS_CUMPROD,
  KD_CUDA_ROWS_LAYER_NORM, KD_CUDA_ROWS_LAYER_NORM_BACKWARD,
};
typedef struct kd_cuda_rows {
  int32_t op, dtype;
  int64_t outer, len, inner;
  double eps;
  const void *x, *g, *w, *b;
  void *y, *mean, *rstd;
} kd_cuda_rows;

/* Random draws into a contiguous n-element output (ops_random.cu), element i as Note [Random
 * number mapping] in src/core/random.h for (seed, offset, i). Dropout: x (contiguous, dtype)
 * in, y = keep ? x * scale : 0 and mask (bool) with keep = uniform_f32(i) < keep_below. */
enum { KD_CUDA_RANDOM_UNIFORM = 1, KD_CUDA_RANDOM_NORMAL, KD_CUDA_RANDOM_INT, KD_CUDA_RANDOM_DROPOUT };
typedef struct kd_cuda_random {
  int32_t kind, dtype;
  int64_t n;
  uint64_t seed, offset;
  int64_t low;
  uint64_t range;
  float keep_below;
  double scale;
  const void *x;
  void *y;
  void *mask;
} kd_cuda_random;

/* ==== version 5: one entry for the non-pointwise op families (ops_index.cu, ops_optim.cu, ...) ====
 * A kd_cuda_op is a strided iteration built by the host's kd_iter_build (as kd_cuda_ew: dim 0
 * innermost, BYTE strides, data pointers at each operand's first element) plus the family's
 * scalars. `kind` picks the family (KD_CUDA_OP_*), `code` the operation within it; the meaning
 * of i[] and d[] is per kind (documented next to the kinds). result[] carries values back to
 * the host for the kinds that report (read synchronously). */
#define KD_CUDA_OP_MAX_OPS 8
enum kd_cuda_op_kind {
  /* data[0]: a contiguous int64 index list of numel elements, checked and wrapped in place:
   * i[0] = size, i[1] = allow negative (v += size). i[2] = 0: result[0] = 1 when an index is
   * out of [-size or 0, size), result[1] = the first (lowest position) bad value (synchronous).
   * i[2] = the device address of the device's kd_cuda_fault, i[3] = the check's sequence number
   * (> 0): nothing is read back; the first bad value is recorded there and every bad index is
   * clamped to 0 (Note [Deferred index errors] in cuda/deferred_check.cuh). */
  KD_CUDA_OP_IX_CHECK = 1,
  /* out (op 0) = src (op 1) at byte offset sum_k idx_k * i[2 + k] (ops 2..): i[0] = number of
   * index operands (<= 6), i[1] = element size. */
  KD_CUDA_OP_IX_GATHER,
  /* dst (op 0) op= src (op 1) at the index offsets (as gather); code = KD_IX_COPY/ADD/MUL/MAX/
   * MIN of cpu/index_common.h, dtype the data dtype; reductions are atomic (duplicates
   * accumulate in an unspecified order, as on PyTorch's CUDA; copy with duplicates: any one). */
  KD_CUDA_OP_IX_SCATTER,
  /* One fused optimizer step over ops [param, state..., grad] (cpu/optim.c): code KD_OPTIM_*,
   * dtype the parameter's; d[] = lr, a, b, eps, wd, mom, damp, step_size, bc2_sqrt;
   * i[] = k_buf, k_gavg, k_max (operand of the optional state, -1 absent), maximize, nesterov,
   * first, decoupled. */
  KD_CUDA_OP_OPTIM,

  /* ---- kinds 30..34: searching and counting (ops_search.cu; pointer operands as 40..63) ---- */
  /* searchsorted: for each of i[0] values (data[1], dtype) the insertion point in its row of
   * i[1] sorted elements (data[0], dtype; row = value / i[2], or row 0 when i[2] == 0), seen
   * through data[2] (int64 sorter, per row; NULL: none); i[3] = right (upper bound), i[4] = 1:
   * data[3] is int32, else int64. */
  KD_CUDA_OP_SEARCH = 30,
  /* code 0 histc: i[0] elements of data[0] (float dtype) counted into data[1] (i[1] bins of
   * dtype) over [d[0], d[1]]; code 1 bincount: i[0] values of data[0] (integer dtype, >= 0,
   * < i[1]) counted into data[2] (int64, i[1] bins, zeroed by the caller), or the float32 /
   * float64 weights data[1] summed into data[2] of their dtype (dtypes[1]). */
  KD_CUDA_OP_HIST = 31,
  /* uniqueConsecutive: data[0] i[0] contiguous rows of i[1] elements (dtype); the first row of
   * each run of equal rows to data[1] (room for i[0] rows), the run of each row to data[2]
   * (int64, i[0]), run lengths to data[3] (int64, room for i[0]). result[0] = runs (synchronous). */
  KD_CUDA_OP_UNIQUE_CONSECUTIVE = 32,
  /* per row of i[0] contiguous rows of i[1] elements: code 0 kthvalue (k = i[2]) of data[0]
   * (dtype) by PyTorch's CPU quickselect; code 1 mode of the sorted rows data[0] (dtype) with
   * their positions data[1] (int64). Values to data[2] (dtype), positions to data[3] (int64). */
  KD_CUDA_OP_SELECT = 33,

  /* ---- kinds 40..63: sorting (ops_sort.cu), convolution (ops_conv.cu), pooling (ops_pool.cu).
   * These take no iteration: data[k] are the operands' device pointers (contiguous buffers),
   * i[] and d[] their sizes (integers travelling in d[] are exact). ---- */
  /* Stable sort of `rows` contiguous rows of n elements (data[0], dtype) by value (NaN largest,
   * -0 == +0; i[3] = descending), the k first (k <= n, topk) kept: data[1] values (rows x k,
   * dtype; NULL for argsort), data[2] int64 positions in the row (rows x k). i[] = rows, n, k, desc. */
  KD_CUDA_OP_SORT = 40,
  /* unique: data[0] n contiguous rows of m elements (dtype; m = 1 for the flat unique), compared
   * as sort's keys; the G distinct rows in sorted order go to data[1] (room for n rows), the row
   * group of each input row to data[2] (int64, n), group sizes to data[3] (int64, room for n).
   * i[] = n, m. result[0] = G (synchronous). */
  KD_CUDA_OP_UNIQUE = 41,
  /* Lower median of each of `rows` contiguous rows of n > 0 elements (data[0], dtype): value to
   * data[1] (rows), its position to data[2] (int64, rows); a row holding NaN gives its first NaN.
   * i[] = rows, n. */
  KD_CUDA_OP_MEDIAN = 42,
  /* Convolution passes on contiguous buffers of dtype (float32/64, float16/bfloat16 with fp32
   * accumulation), 1-D as 2-D with h = kh = 1. code 0 forward: data[3] out (n,o,oh,ow) = conv of
   * data[0] x (n,c,h,w) with data[1] w (o,c/groups,kh,kw) + data[2] bias (o; NULL: none);
   * code 1 input gradient / transposed convolution: data[3] gx (n,c,h,w) from data[0] gy
   * (n,o,oh,ow) and data[1] w, + data[2] bias per channel of c (NULL: none); code 2 weight
   * gradient: data[3] gw (o,c/groups,kh,kw) from data[0] gy and data[1] x.
   * i[] = n, c, h, w, o, oh, ow, groups; d[] = kh, kw, sh, sw, ph, pw, dh, dw. */
  KD_CUDA_OP_CONV = 43,
  /* 2-D pooling over `planes` contiguous (h, w) planes of dtype (float32/float64), code
   * KD_CUDA_POOL_*: forward data[0] x -> data[1] y (planes, oh, ow) (+ data[2] int64 argmax
   * positions ih * w + iw for max, may be NULL); backward data[0] gy (planes, oh, ow) -> data[1]
   * gx (planes, h, w; zeroed by the kernel), max: data[2] the int64 positions (out-of-plane ones
   * ignored). i[] = planes, h, w, oh, ow, divisor override (0 none), count_include_pad;
   * d[] = kh, kw, sh, sw, ph, pw, dh, dw. */
  KD_CUDA_OP_POOL = 44,
  /* Scans along one dim of contiguous [outer, len, inner] buffers (i[0..2]), one thread per line
   * (ops_scan.cu): code 0 cummax / 1 cummin, data[0] x -> data[1] values (dtype), data[2] int64
   * indices (the last of ties, NaN propagates); code 2 cumprodBackward (floating dtypes),
   * data[0] x, data[1] grad, data[2] the cumprod result -> data[3] the input gradient;
   * code 3 logcumsumexp (floating dtypes), data[0] x -> data[1] (log_add_exp in double). */
  KD_CUDA_OP_SCAN = 45,
  /* Gradient scaling (ops_amp.cu, src/cpu/amp.c): code KD_AMP_UNSCALE, op 0 one gradient (in
   * place, dtype), i[0] = addr of the float32 found_inf, i[1] = addr of the float32 inv_scale;
   * code KD_AMP_UPDATE_SCALE, no iteration: i[0] = addr scale (float32), i[1] = addr growth
   * tracker (int32), i[2] = addr found_inf, i[3] = growthInterval; d[0] = growth, d[1] = backoff. */
  KD_CUDA_OP_AMP = 46,
  /* trilIndices (code 1) / triuIndices (code 0) (ops_shape_construct.cu, src/cpu/tri_indices.c):
   * op 0 the contiguous [2, n] output of dtype int32/int64; i[0] = rows, i[1] = cols, i[2] =
   * offset (clamped to [-rows, cols]), i[3] = n. */
  KD_CUDA_OP_TRI_INDICES = 37,
  /* kd.linalg's factorizations through cuSOLVER (ops_linalg.cu): contiguous column-major batches
   * of n x n matrices of dtype (float32/float64). LU code 0: getrf of data[0] in place, int32
   * pivots to data[1] (batch x n), int32 infos to data[2] (batch); code 1: getrs, data[2] (n x k
   * per matrix) = A^{-1} data[2] from data[0] and data[1]. i[] = n, batch, k; code 2: trsm,
   * data[2] = T^{-1} data[2] with T the upper (i[3]) or lower triangle of data[0], unit diagonal
   * if i[4] (data[1] unused). CHOLESKY: potrf
   * (lower) of data[0] in place, infos to data[1]; i[] = n, batch. getrf/potrf: result[0] = 1 +
   * the first matrix whose info is > 0 (0: none), result[1] = its info (synchronous). EIGH:
   * syevd, eigenvectors in place of data[0], ascending eigenvalues to data[1] (dtype, batch x n),
   * infos to data[2]; i[] = n, batch, upper; reports as getrf. QR code 0: geqrf of data[0]
   * (m x n, lda m) in place, tau to data[1] (batch x k); code 1: orgqr, the first q columns of
   * data[0] (m x c per matrix) become Q; i[] = m, n, batch, k, q, c. SVD: gesvd of data[0]
   * (m x n, m >= n, destroyed): S to data[1] (batch x n), U to data[2] (m x m if i[3] else m x n),
   * V^T to data[3] (n x n), infos to data[4]; i[] = m, n, batch, full; reports as getrf. */
  KD_CUDA_OP_LINALG_LU = 47,
  KD_CUDA_OP_LINALG_CHOLESKY = 48,
  KD_CUDA_OP_LINALG_QR = 49,
  KD_CUDA_OP_LINALG_SVD = 50,
  KD_CUDA_OP_LINALG_EIGH = 51,
  /* The fused pointwise steps of the recurrent layers (ops_rnn.cu, src/cpu/rnn_cell.c), dtype
   * float32/float64, contiguous row-major buffers, i[0] = B, i[1] = H; code 0 LSTM: data[0]
   * gates [B, 4H], data[1] cx -> data[2] hy, data[3] cy, data[4] workspace [B, 4H]; code 1 its
   * gradient: data[0..4] gradHy, gradCy, cx, cy, workspace -> data[5] gradGates, data[6] gradCx,
   * data[7] gradWorkspace [B, 4H] or NULL; code 2 GRU: data[0] inputGates, data[1] hiddenGates
   * [B, 3H], data[2] hx -> data[3] hy, data[4] workspace [B, 4H]; code 3 its gradient:
   * data[0..2] gradHy, hx, workspace -> data[3] gradInputGates, data[4] gradHiddenGates, data[5]
   * gradHx, data[6] gradWorkspace or NULL. (Formulas: src/cpu/rnn_cell_math.h.) */
  KD_CUDA_OP_RNN_CELL = 52,
  /* gridSample (ops_grid_sample.cu, src/cpu/grid_sample.c) over contiguous buffers of dtype
   * (float32/float64): data[0] input [N, C, D, H, W], data[1] grid [N, oD, oH, oW, nd] (D = oD = 1
   * for nd = 2), data[2] the output (code 0) or the output's gradient (codes 1, 2) [N, C, oD, oH,
   * oW]; code 0 forward, code 1 the input gradient into data[3] (zeroed here), code 2 the grid
   * gradient into data[4]. i[] = N, C, D, H, W, oD, oH, oW; d[] = nd, mode (0 bilinear,
   * 1 nearest, 2 bicubic), padding (0 zeros, 1 border, 2 reflection), alignCorners. */
  KD_CUDA_OP_GRID_SAMPLE = 53,
  /* The int8 dynamic quantized linear layer (ops_qlinear.cu, src/cpu/qlinear.c; Note [int8
   * dynamic linear numerics]): data[0] input float32 [m, k] contiguous, data[1] the packed weight
   * (Note [Packed int8 weights]: int8, then int32 column sums), data[2] the weight scales float32
   * (1 or n), data[3] bias float32 [n] or NULL, data[4] output float32 [m, n], data[5] scratch
   * int8 [m, kp], data[6] scratch float32 [2 * 256 + 2]; i[] = m, k, n, kp, number of scales,
   * reduceRange. */
  KD_CUDA_OP_QLINEAR = 54,
  /* the fused scaled dot-product attention (src/cpu/attention.c, Note [Fused attention];
   * cuda/ops_attention.cu). The iteration's dims 0 and 1 have size 1 and carry each operand's
   * column and row strides (bytes), dims 2.. are the batch dims (numel batches). i[0..3] = L, S,
   * E, Ev; i[4], i[5] = the dropout's Philox seed and offset; d[0] = scale, d[1] = 1 causal | 2 *
   * mask kind (0 none, 1 bool, 2 float), d[2] = dropout p. Code 0: ops q, k, v, mask (NULL: none)
   * -> op 4 output [batch, L, Ev] contiguous, i[6] = addr of the logsumexp [batch, L]. Code 1: ops q,
   * k, v, mask, gradOutput, output, logsumexp -> op 7 gradQuery [batch, L, E], i[6] = addr gradKey
   * [batch, S, E], i[7] = addr gradValue [batch, S, Ev], all contiguous. E, Ev <= 256. */
  KD_CUDA_OP_ATTENTION = 55,

  /* ---- shape, factory, padding, loss and activation-backward kinds (cuda/ops_shape.cu,
   * ops_pad.cu, ops_loss.cu). "addr" = a device address carried in an i[] slot. ---- */
  /* tril/triu in place on op 0, an UNCOALESCED iteration of the tensor's dims (dim 0 the
   * columns, dim 1 the rows): i[0] = diagonal, i[1] = 1 lower (zero j > r + k) / 0 upper
   * (zero j < r + k); dtype gives the element size. */
  KD_CUDA_OP_TRI = 16,
  /* op 0 a 1-D output of dtype: code 0 arange (d[0] start, d[1] step as doubles; i[0] start,
   * i[1] step as int64), code 1 linspace (d[0] start, d[1] step, d[2] end, i[0] integer start,
   * i[2] steps, i[3] half), element i as src/cpu/factory.c. */
  KD_CUDA_OP_ARANGE = 17,
  /* op 0 the contiguous int64 [n, nc] output: i[0] = nc, i[1] = addr of the n int64 classes. */
  KD_CUDA_OP_ONE_HOT = 18,
  /* code 0 maskedSelect: ops [pos int64, mask bool/uint8, self], out (addr i[0]) [pos - 1] =
   * self where mask; code 1 backward: ops [out, mask, pos], out = mask ? g (addr i[0])[pos - 1]
   * : 0. pos = the inclusive cumsum of the mask in row-major order; i[1] = element size. */
  KD_CUDA_OP_MASKED = 19,
  /* ops [out, grad, x] of one float dtype: i[0] = 0 gelu, 1 gelu tanh, 2 silu, 3 mish, 4 elu,
   * 5 elu from its result; d[0..2] = elu's alpha * scale, scale, inputScale. */
  KD_CUDA_OP_ACT_BACKWARD = 20,
  /* ops [out T, grad f64, nonzero product f64, zero count f64, self T] (float T). */
  KD_CUDA_OP_PROD_BACKWARD = 21,
  /* reflect/replicate pad of contiguous tensors seen as [outer, d0, d1, d2] (k padded dims
   * last): data[0] = dst, numel = outer * prod(out); i[0] = addr src, i[1] = k, i[2] = 0
   * reflect / 1 replicate, i[3] = element size (code 0, gather) or 1 for float64 (code 1,
   * backward: dst (the input gradient, float32/float64) is zeroed, then every output gradient
   * is atomically added to its source), i[4] = outer; d[0..2] in sizes, d[3..5] out sizes,
   * d[6..8] low pads (padded dims outermost first). */
  KD_CUDA_OP_PAD = 22,
  /* interpolate over contiguous [planes, d, h, w] -> [planes, od, oh, ow] (float32/float64
   * dtype), separable taps: data[0] = dst, i[0] = addr src, i[1] = addr of the int64 source
   * indices and i[2] = addr of the double weights, both [od * kd, oh * kh, ow * kw] (k taps per
   * output position of each axis, >= 1; an index -1 after the first ends the
   * taps of that position), i[3] = planes; d[0..2] = d, h, w, d[3..5] = od, oh, ow,
   * d[6..8] = kd, kh, kw. code 0 forward; code 1 backward (dst [planes, d, h, w] zeroed, atomics). */
  KD_CUDA_OP_INTERP = 23,
  /* pointwise losses: ops [out, input, target, weight, posWeight (, grad)] of one float dtype
   * (absent weights are one-element 1.0 operands): code 0 forward, i[0] = 0 mse, 1 l1,
   * 2 smoothL1, 3 bce, 4 bce with logits; i[3] = 1: an input outside [0, 1] is an error: with
   * i[4] = addr of the device's kd_cuda_fault and i[5] = sequence number, recorded there as
   * IX_CHECK's (no read back); with i[4] = 0, result[0] = 1 (synchronous). code 1 backward, i[0] = kind 1..4 of pointwiseLossBackward, i[1] =
   * w.r.t. target. i[2] = has posWeight; d[0] = beta, d[1] = gradient scale. */
  KD_CUDA_OP_LOSS = 24,
  /* data[0] = the contiguous int64 targets (numel): i[0] = classes, i[1] = ignoreIndex;
   * i[2] = 0: result[0] = 1 and result[1] = the first bad target when one is outside
   * [0, classes) and not ignored (synchronous); i[2] = addr of the device's kd_cuda_fault,
   * i[3] = sequence number: recorded there, as IX_CHECK (KD_CUDA_OP_NLL skips such targets). */
  KD_CUDA_OP_NLL_CHECK = 25,
  /* nllLoss over input [N, C, D] (contiguous, dtype float32/float64; addr i[0]), targets
   * [N, D] (int64, addr i[1]), weight (float64 [C], addr i[2] or 0); i[4] = C, i[5] = D,
   * i[6] = ignoreIndex, numel = N * D. code 0: data[0] = float64 losses [N * D], i[3] = addr of
   * the float64 per-element weights (or 0). code 1 (backward): data[0] = float64 [N, C, D]
   * (zeroed here), i[7] = addr of the float64 gradient; d[0] = its scale, d[1] = 1 when the
   * gradient has one value per element (reduction 'none'). */
  KD_CUDA_OP_NLL = 26,

  /* ---- random distributions (cuda/ops_random_dist.cu; Note [Random distributions] in
   * src/core/random.h) ---- */
  /* data[0] = a contiguous output of numel elements of dtype; code a KD_RANDOM_DIST_* value;
   * i[0] = seed, i[1] = offset, i[2] = addr of a contiguous float64 per-element parameter
   * (bernoulli probability, poisson rate) or 0, i[3] = low, i[4] = range (integers), i[5] =
   * ubits; d[0] = a, d[1] = b. With a parameter, result[0] = 1 when one was out of range
   * (bernoulli: outside [0, 1]; poisson: negative or NaN); synchronous then. */
  KD_CUDA_OP_RANDOM_DIST = 27,
  /* multinomial over contiguous float64 rows: i[0] = rows, i[1] = categories C. code 0: data[0]
   * the probabilities; result[0] = 1 when one is negative, 2 when one is inf/NaN (the first
   * found), result[1] = 1 when a row sums to 0 (synchronous). code 1: data[0] the
   * probabilities, replaced by the keys -log(v) / p (i[2] = seed, i[3] = offset). code 2:
   * data[0] the probabilities, replaced by their running sums along each row. code 3: data[0]
   * the int64 [rows, S] sample, i[4] = addr of the running sums, i[5] = S, i[2] = seed,
   * i[3] = offset. */
  KD_CUDA_OP_MULTINOMIAL = 28,
  /* ABI 8: the CTC loss (cuda/ops_ctc.cu; src/cpu/ctc.c) over contiguous float64 logProbs
   * [T, N, C] (addr i[0]) and an int64 list (addr i[1]): per sample its input length, target
   * length and the offset of its targets, [3N], then the targets; numel = N, d[0] = T, d[1] =
   * C, d[2] = Lmax (2 * the longest target + 1), d[3] = blank. code 0 (forward): data[0] =
   * float64 logAlpha [N, T, Lmax], i[2] = addr of the float64 negative log-likelihoods [N].
   * code 1 (backward): data[0] = float64 gradient [T, N, C]; i[2] = the likelihoods, i[3] =
   * logAlpha, i[4] = the float64 gradient of the likelihoods [N], i[5] = a float64 scratch
   * [N, T, Lmax] for logBeta; d[4] = 1 for zeroInfinity. */
  KD_CUDA_OP_CTC = 29,

  /* ---- CUDA graphs (cuda/graphs.cu): no operands; code a KD_CUDA_GRAPH_* value. The capture
   * is of the device's current stream (not the default stream). ---- */
  KD_CUDA_OP_GRAPH = 60,
};
enum {
  KD_CUDA_GRAPH_POOL_NEW = 0, /* result[0] = a new graph pool id (graphPoolHandle) */
  KD_CUDA_GRAPH_BEGIN,        /* i[0] = pool id (0: a new pool), i[1] = the cudaStreamCaptureMode, i[2] = the generator
                                 offset; result[0] = the pool id */
  KD_CUDA_GRAPH_END,          /* i[0] = the pool id, i[1] = 1 to discard the capture, i[2] = the generator offset;
                                 result[0] = the graph */
  KD_CUDA_GRAPH_REPLAY,       /* i[0] = the graph: launched on the current stream, its random ops drawing from
                                 i[2] = the generator seed, i[3] = its offset; result[1] = how far the generator
                                 advances (Note [Random ops in CUDA graphs] in philox_state.cuh) */
  KD_CUDA_GRAPH_RESET,        /* i[0] = the graph: destroyed, its pool use released */
  KD_CUDA_GRAPH_STATUS,       /* result[0] = the current stream's cudaStreamCaptureStatus */
  KD_CUDA_GRAPH_POOL_USES,    /* i[0] = pool id; result[0] = graphs using it */
};
enum {
  KD_CUDA_POOL_MAX = 0, KD_CUDA_POOL_MAX_BACKWARD, KD_CUDA_POOL_AVG, KD_CUDA_POOL_AVG_BACKWARD,
  KD_CUDA_POOL_ADAPTIVE_AVG, KD_CUDA_POOL_ADAPTIVE_AVG_BACKWARD,
};
enum { KD_CUDA_CONV_FORWARD = 0, KD_CUDA_CONV_BACKWARD_INPUT, KD_CUDA_CONV_BACKWARD_WEIGHT };
/* A device's fault record (Note [Deferred index errors] in cuda/deferred_check.cuh): pinned host
 * memory the check kernels write; the host reads it at sync points. `claim` 0 = free; the first
 * check to fail sets it, stores the bad value, then its sequence number (`seq` last). */
typedef struct kd_cuda_fault {
  uint64_t claim;
  uint64_t seq;
  int64_t value;
} kd_cuda_fault;
typedef struct kd_cuda_op {
  int32_t kind, code;
  int32_t dtype;
  int32_t nops, ndim;
  int64_t numel;
  int64_t shape[KD_CUDA_MAX_DIMS];
  int64_t strides[KD_CUDA_OP_MAX_OPS][KD_CUDA_MAX_DIMS];
  void *data[KD_CUDA_OP_MAX_OPS];
  int32_t dtypes[KD_CUDA_OP_MAX_OPS];
  /* bit k: operand k is ONE element at data[k] (all strides 0) that may live in host memory
   * (a host scalar of the CPU kernel) or in device memory; the library reads a host one by value
   * into scalar[k] before launching. */
  uint32_t scalar_mask;
  uint64_t scalar[KD_CUDA_OP_MAX_OPS];
  int64_t i[8];
  double d[12];
  int64_t result[2];
} kd_cuda_op;

typedef struct kd_cuda_api {
  /* .abi_version     = */ uint32_t abi_version;  /* KD_CUDA_ABI_VERSION */
  /* .struct_size     = */ uint32_t struct_size;  /* sizeof(kd_cuda_api) */

  /* ---- errors ---- */
  /* The message of the last failing call on this thread ("" if none). */
  const char *(*last_error)(void);
  /* Stable name of a status: "KD_CUDA_ERR_OOM". */
  const char *(*status_name)(kd_cuda_status s);

  /* ---- runtime and devices ---- */
  /* Finds the driver and the GPUs; creates no context. Idempotent: the first result is
   * remembered and returned (with its message) on every later call. */
  kd_cuda_status (*init)(void);
  /* CUDA runtime version the library was built with, and the driver's (0 if no driver);
   * as 1000 * major + 10 * minor. Never fails. */
  void (*versions)(int *runtime, int *driver);
  kd_cuda_status (*device_count)(int *out);
  kd_cuda_status (*current_device)(int *out);
  kd_cuda_status (*set_device)(int device);
  kd_cuda_status (*device_name)(int device, char *buf, size_t n);
  kd_cuda_status (*device_properties)(int device, kd_cuda_device_props *out);
  /* Waits for all work on the device (and reports errors of kernels that ran). */
  kd_cuda_status (*synchronize)(int device);

  /* ---- memory (one allocator entry point; the caching allocator replaces it) ---- */
  /* nbytes 0 gives NULL. Out of memory is KD_CUDA_ERR_OOM with PyTorch's message. */
  kd_cuda_status (*malloc)(int device, size_t nbytes, void **out);
  kd_cuda_status (*free)(int device, void *ptr);

  /* ---- copies, ordered on the device's current stream ----
   * h2d returns once `src` may be reused; d2h returns once `dst` holds the data; d2d between
   * two devices is synchronous, on one device asynchronous. */
  kd_cuda_status (*memcpy_h2d)(int device, void *dst, const void *src, size_t nbytes);
  kd_cuda_status (*memcpy_d2h)(int device, void *dst, const void *src, size_t nbytes);
  kd_cuda_status (*memcpy_d2d)(int dst_device, void *dst, int src_device, const void *src, size_t nbytes);

  /* ---- kernels (asynchronous) ---- */
  /* dst[i] = convert(src[i]) for every index of dst; src has the same ndim and sizes (callers
   * broadcast with stride 0). Any pair of dtypes; conversion as core/dtype.h's scalars
   * (float -> int: NaN -> 0, saturate to int64, then wrap; x -> bool: x != 0). dst must not
   * partially overlap src. */
  kd_cuda_status (*copy)(int device, const kd_cuda_array *dst, const kd_cuda_array *src);
  /* Every element of dst = *value, one element of dst's dtype in host memory. */
  kd_cuda_status (*fill)(int device, const kd_cuda_array *dst, const void *value);

  /* ==== version 2: caching allocator, streams, events, pinned memory, async completion ====
   * Streams are opaque handles (a cudaStream_t as uintptr_t); 0 is the device's default stream
   * (the legacy default stream, which orders with every stream created here). Events are opaque
   * pointers. The current stream is per host thread and device. */

  /* ---- caching allocator (cuda/caching_allocator.cu; malloc/free above go through it) ---- */
  /* The block holding ptr is also used by `stream`: reused only after that stream's work queued
   * before the free has finished. */
  kd_cuda_status (*record_stream)(int device, void *ptr, uintptr_t stream);
  /* JSON of PyTorch's memory_stats keys / memory_snapshot list, and the text of memory_summary;
   * *out is freed with free_string. */
  kd_cuda_status (*memory_stats_json)(int device, char **out);
  kd_cuda_status (*memory_snapshot_json)(int device, char **out);
  kd_cuda_status (*memory_summary)(int device, char **out);
  void (*free_string)(char *s);
  kd_cuda_status (*empty_cache)(int device);
  kd_cuda_status (*reset_peak_memory_stats)(int device);
  kd_cuda_status (*set_memory_fraction)(int device, double fraction);

  /* ---- streams ---- */
  kd_cuda_status (*stream_create)(int device, int priority, uintptr_t *out);
  kd_cuda_status (*stream_query)(int device, uintptr_t stream, int *done);
  kd_cuda_status (*current_stream)(int device, uintptr_t *out);
  kd_cuda_status (*set_current_stream)(int device, uintptr_t stream);

  /* ---- events ---- */
  kd_cuda_status (*event_create)(int device, int enable_timing, void **out);
  void (*event_destroy)(void *event);
  kd_cuda_status (*event_record)(void *event, int device, uintptr_t stream);
  kd_cuda_status (*event_query)(void *event, int *done);
  kd_cuda_status (*event_elapsed_time)(void *start, void *end, float *ms);
  kd_cuda_status (*stream_wait_event)(int device, uintptr_t stream, void *event);

  /* ---- completion without blocking: fn(user) runs on a CUDA-internal thread once the work
   * queued before it (on `stream`; or before `event` was recorded) has finished. fn must not
   * call CUDA; kindling.node hands it to a napi_threadsafe_function. ---- */
  kd_cuda_status (*launch_host_func)(int device, uintptr_t stream, void (*fn)(void *), void *user);
  kd_cuda_status (*event_host_func)(int device, void *event, void (*fn)(void *), void *user);
  /* Errors of earlier asynchronous work on this thread, without clearing them (KD_CUDA_OK if none). */
  kd_cuda_status (*peek_error)(int device);

  /* ---- pinned host memory (a caching host allocator: a freed block is reused only after the
   * copies recorded on it have finished) ---- */
  kd_cuda_status (*host_alloc)(size_t nbytes, void **out);
  void (*host_free)(void *ptr);
  /* 1 when ptr lies inside a live pinned block of this allocator. */
  int (*host_owns)(const void *ptr);
  /* Asynchronous copies on the device's current stream, without waiting. From or to a pinned
   * block of host_alloc, the block is protected (an event is recorded on it); any other host
   * pointer must stay valid until the caller knows the copy finished. */
  kd_cuda_status (*memcpy_h2d_async)(int device, void *dst, const void *src, size_t nbytes);
  kd_cuda_status (*memcpy_d2h_async)(int device, void *dst, const void *src, size_t nbytes);

  /* ---- test hook: a kernel that spins about `ms` milliseconds on the current stream (ms < 0: -ms, then a trap) ---- */
  kd_cuda_status (*spin)(int device, double ms);

  /* ==== version 3: op kernels ==== */
  /* A pointwise pass (kd_cuda_ew). *flags gets KD_EW_FLAG_* bits the kernel raised (integer
   * division by zero; reading them synchronises, only for the codes that can raise them).
   * An op/dtype the library lacks is KD_CUDA_ERR_NOT_SUPPORTED. */
  kd_cuda_status (*elementwise)(int device, const kd_cuda_ew *ew, int32_t *flags);
  /* A batched matrix product on cuBLAS (kd_cuda_gemm); integer dtypes: KD_CUDA_ERR_NOT_SUPPORTED. */
  kd_cuda_status (*gemm)(int device, const kd_cuda_gemm *g);

  /* ==== version 4: reductions, row ops, random ==== */
  kd_cuda_status (*reduce)(int device, const kd_cuda_reduce *r);
  kd_cuda_status (*rows)(int device, const kd_cuda_rows *r);
  kd_cuda_status (*random)(int device, const kd_cuda_random *r);

  /* ==== version 5: the op families entry ==== */
  /* One launch of a non-pointwise family (kd_cuda_op); an op/dtype the library lacks is
   * KD_CUDA_ERR_NOT_SUPPORTED. */
  kd_cuda_status (*op)(int device, kd_cuda_op *op);

  /* ==== version 6: the profiler's launch observer ==== */
  /* fn(user, kernel, device, stream) runs on the launching thread just before each kernel launch
   * (KD_LAUNCH; not library calls such as cuBLAS), with the kernel's name as written at the launch
   * ("kd_cu_binary_kernel<T, int32_t>", static storage). NULL turns it off. */
  void (*set_launch_observer)(void (*fn)(void *user, const char *kernel, int device, uintptr_t stream), void *user);
} kd_cuda_api;

typedef const kd_cuda_api *(*kd_cuda_get_api_fn)(int abi_version);
#define KD_CUDA_GET_API_SYMBOL "kd_cuda_get_api"

/* The emulated GPU (libkindling_cuda_emu.so, cuda/emulator) also exports its counters: totals
 * since the library loaded (Note [Emulator counters] in cuda/emulator/runtime.cpp). */
typedef struct kd_cuda_emu_stats {
  uint64_t launches;    /* kernel launches, and library calls that launch kernels (cuBLAS, CUB) */
  uint64_t blocks, threads;
  uint64_t syncs;       /* calls that block the host until device work finishes */
  uint64_t h2d_bytes, d2h_bytes, d2d_bytes;
  uint64_t h2d_copies, d2h_copies, d2d_copies;
  uint64_t mallocs, frees; /* cudaMalloc(Async) / cudaFree(Async) */
  uint64_t host_funcs;
  uint64_t devices, memory, seed; /* the configuration */
  char fault[256];      /* what made a device's error sticky ("" if nothing) */
  uint64_t graph_launches; /* ABI 6: cudaGraphLaunch calls (each also counts as one launch) */
  uint64_t graph_kernels;  /* ABI 6: kernel launches replayed by them (not in `launches`) */
} kd_cuda_emu_stats;
typedef int (*kd_cuda_emu_stats_fn)(kd_cuda_emu_stats *out);
#define KD_CUDA_EMU_STATS_SYMBOL "kd_cuda_emulator_stats"

#ifdef __cplusplus
}
#endif
#endif
