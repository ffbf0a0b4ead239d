/* ops_attention.cu - the device kernels of the fused scaled dot-product attention
 * (KD_CUDA_OP_ATTENTION; src/cpu/attention.c checks and lays out the operands, Note [Fused
 * attention] there): flash attention's forward and its backward recomputed from the log-sum-exp.
 *
 * Every kernel runs 128 threads on a tile of 32 query rows (forward, dQ) or 32 keys (dK, dV), one
 * block per (batch, tile), so the [L, S] scores never leave the block. Four threads share a row
 * (or key): thread t owns row t / 4 and the columns t % 4 + 4 j of every 32-wide tile, so a row's
 * maximum and sum are two warp shuffles. Operand tiles of 32 x 32 are loaded into shared memory by
 * consecutive threads reading consecutive columns (coalesced when the head dim is contiguous) and
 * the head dims E, Ev are walked in 32-wide chunks, so shared memory stays at four 32 x 33 tiles
 * (34 KB in double) whatever the head dim; the accumulators of one row (or key) live in registers,
 * NCH chunks of 8 per thread (E, Ev <= 32 * NCH <= 256). Forward: for each key tile the scores,
 * the online softmax (running maximum m and sum l, the output rescaled by exp(m_old - m_new)),
 * P V; the output divided by l and the log-sum-exp m + log l at the end. Backward: one kernel per
 * key tile accumulates dV += P^T dO and dK += scale dS^T Q over the query tiles, one per query
 * tile accumulates dQ += scale dS K over the key tiles, both recomputing P = exp(s - lse) and
 * dS = P (dO V^T - D) with D = rowsum(dO * O): no atomics, no workspace, no sync with the host.
 * The causal mask skips the tiles it empties. Dropout redraws each weight's keep decision from
 * its Philox counter (the CPU's mapping, Note [Fused attention]) in every kernel, the stream's seed
 * and offset read once per thread (from the graph's words when captured). Scalar CUDA-core
 * arithmetic (float32/float64). */
#include "ops_shape.cuh"
#include "philox_state.cuh"

#include <math.h>

#include "../src/core/random.h"

enum { KD_ATT_T = 32, KD_ATT_THREADS = 128, KD_ATT_MAXB = KD_CUDA_MAX_DIMS - 2 };
enum { AQ, AK, AV, AM, AG, AO, ALSE, ANOPS };

struct kd_cu_att_p {
  const char *in[ANOPS]; /* operands (AM NULL: no mask) */
  void *out, *lse, *dq, *dk, *dv;
  int nb;
  int64_t bshape[KD_ATT_MAXB];     /* batch dims, innermost first */
  int64_t bst[ANOPS][KD_ATT_MAXB]; /* their strides, elements */
  int64_t rs[ANOPS], cs[ANOPS];    /* row and column strides, elements */
  int64_t L, S, E, Ev, ntiles;
  int causal, mask_kind;
  double scale, dropout;
  kd_cu_philox ph; /* the dropout's stream (Note [Random ops in CUDA graphs]) */
};

/* Element offset of operand k in batch n. */
__device__ static inline int64_t kd_att_off(const kd_cu_att_p &a, int k, int64_t n) {
  int64_t off = 0;
  for (int d = 0; d < a.nb; d++) {
    const int64_t sz = a.bshape[d];
    off += (n % sz) * a.bst[k][d];
    n /= sz;
  }
  return off;
}

/* What a block reads once: every operand's element offset in batch n (0 for an absent one) and
 * the dropout stream's seed and offset. */
struct kd_att_batch {
  int64_t off[ANOPS];
  uint64_t seed, offset;
};
__device__ static inline kd_att_batch kd_att_begin(const kd_cu_att_p &a, int64_t n) {
  kd_att_batch b;
  for (int k = 0; k < ANOPS; k++) b.off[k] = a.in[k] ? kd_att_off(a, k, n) : 0;
  b.seed = b.offset = 0;
  if (a.dropout > 0) a.ph.unpack(b.seed, b.offset);
  return b;
}

/* The scaled score s of query row i and key j with the mask applied; -inf where left out
 * (outside [L, S], the causal mask, a false bool mask). */
template <typename T>
__device__ static inline T kd_att_masked(const kd_cu_att_p &a, int64_t om, int64_t i, int64_t j, T s) {
  if (i >= a.L || j >= a.S || (a.causal && j > i)) return (T)-INFINITY;
  s *= (T)a.scale;
  if (a.mask_kind == 1) {
    if (!((const bool *)a.in[AM])[om + i * a.rs[AM] + j * a.cs[AM]]) return (T)-INFINITY;
  } else if (a.mask_kind == 2) {
    s += ((const T *)a.in[AM])[om + i * a.rs[AM] + j * a.cs[AM]];
  }
  return s;
}

/* Loads the 32 x 32 tile rows [r0, r0 + 32) x cols [c0, c0 + 32) of operand k (nrows, ncols;
 * zeros outside) into sh: consecutive threads read consecutive columns. */
template <typename T>
__device__ static inline void kd_att_load(const kd_cu_att_p &a, int k, int64_t off, int64_t r0, int64_t nrows,
                                          int64_t c0, int64_t ncols, T (*sh)[KD_ATT_T + 1]) {
  const T *p = (const T *)a.in[k] + off;
  for (int x = threadIdx.x; x < KD_ATT_T * KD_ATT_T; x += KD_ATT_THREADS) {
    const int r = x / KD_ATT_T, c = x % KD_ATT_T;
    sh[r][c] = r0 + r < nrows && c0 + c < ncols ? p[(r0 + r) * a.rs[k] + (c0 + c) * a.cs[k]] : (T)0;
  }
}

/* s[j] += sum over the head dim of A[row] . B[g + 4 j] for the tiles of operands ka (rows a0..,
 * row `row` of the tile) and kb (rows b0..), walking the head dim D in 32-wide chunks. */
template <typename T>
__device__ static inline void kd_att_dots(const kd_cu_att_p &a, int ka, int64_t offa, int64_t a0, int64_t na, int kb,
                                          int64_t offb, int64_t b0, int64_t nbr, int64_t D, int row, int g, T *s,
                                          T (*sa)[KD_ATT_T + 1], T (*sb)[KD_ATT_T + 1]) {
  for (int64_t e0 = 0; e0 < D; e0 += KD_ATT_T) {
    kd_att_load<T>(a, ka, offa, a0, na, e0, D, sa);
    kd_att_load<T>(a, kb, offb, b0, nbr, e0, D, sb);
    __syncthreads();
#pragma unroll 4
    for (int c = 0; c < KD_ATT_T; c++) {
      const T x = sa[row][c];
#pragma unroll
      for (int j = 0; j < 8; j++) s[j] += x * sb[g + 4 * j][c];
    }
    __syncthreads();
  }
}

/* The dropout factor of weight (n, i, j): 0, or 1 / (1 - p) when its draw keeps it (as the CPU's
 * kd_attn_drop and nativeDropout); 1 without dropout. */
template <typename T>
__device__ static inline T kd_att_keep(const kd_cu_att_p &a, uint64_t seed, uint64_t offset, int64_t n, int64_t i, int64_t j) {
  if (a.dropout <= 0) return (T)1;
  if (i >= a.L || j >= a.S) return (T)0;
  const uint64_t idx = ((uint64_t)n * (uint64_t)a.L + (uint64_t)i) * (uint64_t)a.S + (uint64_t)j;
  return kd_random_uniform_f32(seed, offset, idx) < (float)(1.0 - a.dropout) ? (a.dropout >= 1 ? (T)0 : (T)(1.0 / (1.0 - a.dropout)))
                                                                             : (T)0;
}

template <typename T>
__device__ static inline T kd_att_quad_max(T v) {
  v = fmax(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmax(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
template <typename T>
__device__ static inline T kd_att_quad_sum(T v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/* acc[ch * 8 + j] (column ch * 32 + g + 4 j of D) += sum over the 32 rows c of w[row][c] (or
 * w[c][row] when `transposed`) * operand k's tile row c: operand rows r0.., chunked over D. */
template <typename T, int NCH>
__device__ static inline void kd_att_accumulate(const kd_cu_att_p &a, int k, int64_t off, int64_t r0, int64_t nrows,
                                                int64_t D, int row, int g, bool transposed, T *acc,
                                                T (*w)[KD_ATT_T + 1], T (*sh)[KD_ATT_T + 1]) {
#pragma unroll
  for (int ch = 0; ch < NCH; ch++) {
    if (ch * KD_ATT_T >= D) break; /* uniform over the block */
    kd_att_load<T>(a, k, off, r0, nrows, (int64_t)ch * KD_ATT_T, D, sh);
    __syncthreads();
    for (int c = 0; c < KD_ATT_T; c++) {
      const T x = transposed ? w[c][row] : w[row][c];
#pragma unroll
      for (int j = 0; j < 8; j++) acc[ch * 8 + j] += x * sh[c][g + 4 * j];
    }
    __syncthreads();
  }
}

/* Writes the accumulators of row `row` (columns ch * 32 + g + 4 j < D) times f to dst row. */
template <typename T, int NCH>
__device__ static inline void kd_att_store(T *dst, int64_t D, int g, const T *acc, T f) {
#pragma unroll
  for (int ch = 0; ch < NCH; ch++)
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int64_t col = (int64_t)ch * KD_ATT_T + g + 4 * j;
      if (col < D) dst[col] = acc[ch * 8 + j] * f;
    }
}

template <typename T, int NCH>
__global__ void __launch_bounds__(KD_ATT_THREADS) kd_cu_att_forward(const kd_cu_att_p a) {
  __shared__ T qs[KD_ATT_T][KD_ATT_T + 1], ks[KD_ATT_T][KD_ATT_T + 1], ps[KD_ATT_T][KD_ATT_T + 1];
  const int t = threadIdx.x, r = t / 4, g = t % 4;
  const int64_t n = blockIdx.x / a.ntiles, i0 = (blockIdx.x % a.ntiles) * KD_ATT_T, i = i0 + r;
  const kd_att_batch b = kd_att_begin(a, n);
  const int64_t oq = b.off[AQ], ok = b.off[AK], ov = b.off[AV], om = b.off[AM];
  const uint64_t seed = b.seed, offset = b.offset;
  T m = (T)-INFINITY, l = 0, acc[NCH * 8];
#pragma unroll
  for (int x = 0; x < NCH * 8; x++) acc[x] = 0;
  const int64_t kend = a.causal ? (a.S < i0 + KD_ATT_T ? a.S : i0 + KD_ATT_T) : a.S;
  for (int64_t j0 = 0; j0 < kend; j0 += KD_ATT_T) {
    T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    kd_att_dots<T>(a, AQ, oq, i0, a.L, AK, ok, j0, a.S, a.E, r, g, s, qs, ks);
    T bm = (T)-INFINITY;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      s[j] = kd_att_masked<T>(a, om, i, j0 + g + 4 * j, s[j]);
      bm = fmax(bm, s[j]);
    }
    bm = kd_att_quad_max(bm);
    const T mnew = fmax(m, bm);
    T corr = 1, rsum = 0;
    if (mnew != (T)-INFINITY) {
      corr = exp(m - mnew);
#pragma unroll
      for (int j = 0; j < 8; j++) {
        s[j] = exp(s[j] - mnew);
        rsum += s[j];
      }
      m = mnew;
    } else {
#pragma unroll
      for (int j = 0; j < 8; j++) s[j] = 0;
    }
    l = l * corr + kd_att_quad_sum(rsum);
#pragma unroll
    for (int x = 0; x < NCH * 8; x++) acc[x] *= corr;
#pragma unroll
    for (int j = 0; j < 8; j++) ps[r][g + 4 * j] = s[j] * kd_att_keep<T>(a, seed, offset, n, i, j0 + g + 4 * j);
    __syncthreads();
    kd_att_accumulate<T, NCH>(a, AV, ov, j0, a.S, a.Ev, r, g, false, acc, ps, ks);
  }
  if (i < a.L) {
    kd_att_store<T, NCH>((T *)a.out + (n * a.L + i) * a.Ev, a.Ev, g, acc, l == 0 ? (T)NAN : (T)1 / l);
    if (g == 0) ((T *)a.lse)[n * a.L + i] = m + log(l);
  }
}

template <typename T, int NCH>
__global__ void __launch_bounds__(KD_ATT_THREADS) kd_cu_att_backward_kv(const kd_cu_att_p a) {
  __shared__ T qs[KD_ATT_T][KD_ATT_T + 1], ks[KD_ATT_T][KD_ATT_T + 1], ps[KD_ATT_T][KD_ATT_T + 1];
  __shared__ T ds_row[KD_ATT_T], lse_row[KD_ATT_T];
  const int t = threadIdx.x, c = t / 4, g = t % 4;
  const int64_t n = blockIdx.x / a.ntiles, j0 = (blockIdx.x % a.ntiles) * KD_ATT_T, jj = j0 + c;
  const kd_att_batch b = kd_att_begin(a, n);
  const int64_t oq = b.off[AQ], ok = b.off[AK], ov = b.off[AV], og = b.off[AG], oo = b.off[AO], ol = b.off[ALSE];
  const int64_t om = b.off[AM];
  const uint64_t seed = b.seed, offset = b.offset;
  T dk[NCH * 8], dv[NCH * 8];
#pragma unroll
  for (int x = 0; x < NCH * 8; x++) dk[x] = dv[x] = 0;
  for (int64_t i0 = a.causal ? j0 : 0; i0 < a.L; i0 += KD_ATT_T) {
    __syncthreads(); /* the previous tile's readers of ps, ds_row, lse_row are done */
    { /* D and lse of the tile's rows: thread (row c, lane g) sums columns g + 4 m */
      const int64_t i = i0 + c;
      T d = 0;
      if (i < a.L)
        for (int64_t e = g; e < a.Ev; e += 4)
          d += ((const T *)a.in[AG])[og + i * a.rs[AG] + e * a.cs[AG]] * ((const T *)a.in[AO])[oo + i * a.rs[AO] + e * a.cs[AO]];
      d = kd_att_quad_sum(d);
      if (g == 0) {
        ds_row[c] = d;
        lse_row[c] = i < a.L ? ((const T *)a.in[ALSE])[ol + i * a.rs[ALSE]] : (T)0;
      }
      __syncthreads();
    }
    T s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, dp[8] = {0, 0, 0, 0, 0, 0, 0, 0}, z[8];
    kd_att_dots<T>(a, AK, ok, j0, a.S, AQ, oq, i0, a.L, a.E, c, g, s, ks, qs); /* s[j]: row g + 4 j, key c */
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int rq = g + 4 * j;
      const T x = kd_att_masked<T>(a, om, i0 + rq, jj, s[j]);
      s[j] = x == (T)-INFINITY ? (T)0 : exp(x - lse_row[rq]);
      z[j] = kd_att_keep<T>(a, seed, offset, n, i0 + rq, jj);
      ps[rq][c] = s[j] * z[j]; /* the weights as the forward used them */
    }
    kd_att_dots<T>(a, AV, ov, j0, a.S, AG, og, i0, a.L, a.Ev, c, g, dp, ks, qs); /* dp[j] = dO[row] . V[key] */
    kd_att_accumulate<T, NCH>(a, AG, og, i0, a.L, a.Ev, c, g, true, dv, ps, qs); /* dV[key] += P[:, key]^T dO */
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int rq = g + 4 * j;
      ps[rq][c] = s[j] * (z[j] * dp[j] - ds_row[rq]);
    }
    __syncthreads();
    kd_att_accumulate<T, NCH>(a, AQ, oq, i0, a.L, a.E, c, g, true, dk, ps, qs); /* dK[key] += dS[:, key]^T Q */
  }
  if (jj < a.S) {
    kd_att_store<T, NCH>((T *)a.dk + (n * a.S + jj) * a.E, a.E, g, dk, (T)a.scale);
    kd_att_store<T, NCH>((T *)a.dv + (n * a.S + jj) * a.Ev, a.Ev, g, dv, (T)1);
  }
}

template <typename T, int NCH>
__global__ void __launch_bounds__(KD_ATT_THREADS) kd_cu_att_backward_q(const kd_cu_att_p a) {
  __shared__ T qs[KD_ATT_T][KD_ATT_T + 1], ks[KD_ATT_T][KD_ATT_T + 1], ps[KD_ATT_T][KD_ATT_T + 1];
  const int t = threadIdx.x, r = t / 4, g = t % 4;
  const int64_t n = blockIdx.x / a.ntiles, i0 = (blockIdx.x % a.ntiles) * KD_ATT_T, i = i0 + r;
  const kd_att_batch b = kd_att_begin(a, n);
  const int64_t oq = b.off[AQ], ok = b.off[AK], ov = b.off[AV], og = b.off[AG], oo = b.off[AO], ol = b.off[ALSE];
  const int64_t om = b.off[AM];
  const uint64_t seed = b.seed, offset = b.offset;
  T d = 0, lse = 0, dq[NCH * 8];
#pragma unroll
  for (int x = 0; x < NCH * 8; x++) dq[x] = 0;
  if (i < a.L) {
    for (int64_t e = g; e < a.Ev; e += 4)
      d += ((const T *)a.in[AG])[og + i * a.rs[AG] + e * a.cs[AG]] * ((const T *)a.in[AO])[oo + i * a.rs[AO] + e * a.cs[AO]];
    lse = ((const T *)a.in[ALSE])[ol + i * a.rs[ALSE]];
  }
  d = kd_att_quad_sum(d);
  const int64_t kend = a.causal ? (a.S < i0 + KD_ATT_T ? a.S : i0 + KD_ATT_T) : a.S;
  for (int64_t j0 = 0; j0 < kend; j0 += KD_ATT_T) {
    T s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, dp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    kd_att_dots<T>(a, AQ, oq, i0, a.L, AK, ok, j0, a.S, a.E, r, g, s, qs, ks);
    kd_att_dots<T>(a, AG, og, i0, a.L, AV, ov, j0, a.S, a.Ev, r, g, dp, qs, ks);
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const T x = kd_att_masked<T>(a, om, i, j0 + g + 4 * j, s[j]);
      const T p = x == (T)-INFINITY ? (T)0 : exp(x - lse);
      ps[r][g + 4 * j] = p * (kd_att_keep<T>(a, seed, offset, n, i, j0 + g + 4 * j) * dp[j] - d);
    }
    __syncthreads();
    kd_att_accumulate<T, NCH>(a, AK, ok, j0, a.S, a.E, r, g, false, dq, ps, ks);
  }
  if (i < a.L) kd_att_store<T, NCH>((T *)a.dq + (n * a.L + i) * a.E, a.E, g, dq, (T)a.scale);
}

template <typename T, int NCH>
static kd_cuda_status kd_cu_att_launch(const kd_cu_att_p &base, int code, int64_t nbatch, cudaStream_t s) {
  kd_cu_att_p a = base;
  if (code == 0) {
    a.ntiles = (a.L + KD_ATT_T - 1) / KD_ATT_T;
    KD_LAUNCH((unsigned)(nbatch * a.ntiles), KD_ATT_THREADS, 0, s, kd_cu_att_forward<T, NCH>)(a);
    KD_CU_CHECK_LAUNCH("the fused attention kernel");
    return KD_CUDA_OK;
  }
  if (a.S > 0) {
    a.ntiles = (a.S + KD_ATT_T - 1) / KD_ATT_T;
    KD_LAUNCH((unsigned)(nbatch * a.ntiles), KD_ATT_THREADS, 0, s, kd_cu_att_backward_kv<T, NCH>)(a);
    KD_CU_CHECK_LAUNCH("the fused attention backward (key, value) kernel");
  }
  a.ntiles = (a.L + KD_ATT_T - 1) / KD_ATT_T;
  KD_LAUNCH((unsigned)(nbatch * a.ntiles), KD_ATT_THREADS, 0, s, kd_cu_att_backward_q<T, NCH>)(a);
  KD_CU_CHECK_LAUNCH("the fused attention backward (query) kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_attention(int device, kd_cuda_op *o) {
  const int code = o->code, nin = code == 0 ? 4 : ANOPS;
  if ((code != 0 && code != 1) || o->nops != nin + 1 || o->ndim < 2 || o->ndim > KD_CUDA_MAX_DIMS)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused attention: bad arguments");
  if (o->dtype != KD_DTYPE_F32 && o->dtype != KD_DTYPE_F64) return kd_cu_not_supported("fused attention", o->dtype);
  kd_cu_att_p a;
  memset(&a, 0, sizeof a);
  a.L = o->i[0];
  a.S = o->i[1];
  a.E = o->i[2];
  a.Ev = o->i[3];
  const int flags = (int)o->d[1];
  a.causal = flags & 1;
  a.mask_kind = flags >> 1;
  a.scale = a.E > 0 ? o->d[0] : 1.0; /* E == 0: zero scores, whatever the scale (1/sqrt(0) = inf) */
  a.dropout = o->d[2];
  const int64_t maxd = a.E > a.Ev ? a.E : a.Ev;
  if (a.L < 0 || a.S < 0 || a.E < 0 || a.Ev < 0 || maxd > 8 * KD_ATT_T || a.mask_kind > 2)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused attention: head dims up to %d (got %lld and %lld)",
                       8 * KD_ATT_T, (long long)a.E, (long long)a.Ev);
  a.nb = o->ndim - 2;
  for (int d = 0; d < a.nb; d++) a.bshape[d] = o->shape[2 + d];
  for (int k = 0; k < nin; k++) {
    a.in[k] = (const char *)o->data[k];
    const int64_t es = (int64_t)kd_cu_dtype_size(o->dtypes[k]);
    if (es <= 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused attention: bad operand dtype");
    a.cs[k] = o->strides[k][0] / es;
    a.rs[k] = o->strides[k][1] / es;
    for (int d = 0; d < a.nb; d++) a.bst[k][d] = o->strides[k][2 + d] / es;
  }
  if (code == 0) {
    a.out = o->data[nin];
    a.lse = kd_cu_addr<char>(o->i[6]);
  } else {
    a.dq = o->data[nin];
    a.dk = kd_cu_addr<char>(o->i[6]);
    a.dv = kd_cu_addr<char>(o->i[7]);
  }
  const int64_t nbatch = o->numel;
  const int64_t tiles = ((a.L > a.S ? a.L : a.S) + KD_ATT_T - 1) / KD_ATT_T;
  if (nbatch <= 0 || a.L == 0) return KD_CUDA_OK;
  if (tiles > 0 && nbatch > (int64_t)0x7fffffff / tiles)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused attention: %lld batches of %lld tiles exceed a grid",
                       (long long)nbatch, (long long)tiles);
  cudaStream_t s = kd_cu_stream(device);
  if (a.dropout > 0) a.ph = kd_cu_graph_philox(device, s, (uint64_t)o->i[4], (uint64_t)o->i[5]);
  const bool f64 = o->dtype == KD_DTYPE_F64;
  const int nch = maxd <= 64 ? 2 : maxd <= 128 ? 4 : 8;
  switch (nch * 2 + f64) {
    case 4: return kd_cu_att_launch<float, 2>(a, code, nbatch, s);
    case 5: return kd_cu_att_launch<double, 2>(a, code, nbatch, s);
    case 8: return kd_cu_att_launch<float, 4>(a, code, nbatch, s);
    case 9: return kd_cu_att_launch<double, 4>(a, code, nbatch, s);
    case 16: return kd_cu_att_launch<float, 8>(a, code, nbatch, s);
    default: return kd_cu_att_launch<double, 8>(a, code, nbatch, s);
  }
}
