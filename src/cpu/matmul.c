/* matmul.c - CPU kernels of mm (2-D @ 2-D), bmm (3-D @ 3-D, same batch), and addmm/baddbmm
 * (beta * self + alpha * product, with self accumulated by the gemm itself: see the end).
 *
 * float32/float64 go to OpenBLAS (cblas_sgemm/cblas_dgemm) when the build found it
 * (KD_HAVE_CBLAS=1, see tools/find-blas.js). An operand that is row-major or column-major
 * in memory (a plain matrix, a transpose, a row/column slice) is handed to BLAS in place
 * through the transpose flag and leading dimension; only other layouts (expanded, stepped
 * in both dims) are first copied to a contiguous buffer. bfloat16 products of at least 32^3
 * multiply-adds run on AMX tiles or AVX512-BF16 dot products where the CPU has them
 * (gemm_bf16_amx.c, gemm_bf16.c; kd.build.bf16Gemm says which); other
 * float16/bfloat16 ones of that size are computed in float32 by sgemm and rounded once
 * (kd_mm_in_float32). Every other dtype, and every dtype in builds without BLAS, runs
 * kindling's blocked kernel (gemm_blocked.c, any strides).
 *
 * Checks and messages follow PyTorch 2.x (mm: "mat1 and mat2 shapes cannot be multiplied
 * (2x3 and 4x5)", "expected m1 and m2 to have the same dtype, but got: float != double").
 * The output is always a fresh contiguous tensor; k == 0 gives zeros. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/gemm_bf16.h"
#include "ops/kernel.h"

#if KD_HAVE_CBLAS
#include <cblas.h>
#endif

/* gemm_blocked.c: C[b] = A[b] @ B[b], strides in elements, C contiguous; m, n, k > 0. */
kd_status kd_gemm_blocked(kd_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                          const char *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                          const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c);

/* The C++ type names PyTorch prints for a dtype (caffe2::TypeMeta, as GCC spells them). */
static const char *kd_mm_cpp_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "float",        [KD_DTYPE_F64] = "double",       [KD_DTYPE_F16] = "c10::Half",
      [KD_DTYPE_BF16] = "c10::BFloat16", [KD_DTYPE_I8] = "signed char", [KD_DTYPE_U8] = "unsigned char",
      [KD_DTYPE_I16] = "short int",    [KD_DTYPE_I32] = "int",          [KD_DTYPE_I64] = "long int",
      [KD_DTYPE_BOOL] = "bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}

/* PyTorch's ScalarType names ("Float", "Long", ...), for "expected scalar type" messages. */
static const char *kd_mm_scalar_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half", [KD_DTYPE_BF16] = "BFloat16",
      [KD_DTYPE_I8] = "Char",   [KD_DTYPE_U8] = "Byte",    [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int",
      [KD_DTYPE_I64] = "Long",  [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}

/* One batch of matrices: data + strides in elements (batch stride 0 for mm). */
typedef struct kd_mm_operand {
  const char *data;
  int64_t bs, rs, cs;
} kd_mm_operand;

#if KD_HAVE_CBLAS

/* Keeps OpenBLAS's thread count equal to kindling's (KINDLING_NUM_THREADS, setNumThreads),
 * as torch.set_num_threads also governs the BLAS it calls. Declared in nn_common.h. */
void kd_blas_sync_threads(void) {
#ifdef OPENBLAS_VERSION
  static int kd_blas_threads;
  int n = kd_get_num_threads();
  if (__atomic_load_n(&kd_blas_threads, __ATOMIC_RELAXED) != n) {
    openblas_set_num_threads(n);
    __atomic_store_n(&kd_blas_threads, n, __ATOMIC_RELAXED);
  }
#endif
}

/* How BLAS can read an r x c matrix with strides (rs, cs) in place: row-major
 * (NoTrans, ld = rs) or column-major (Trans, ld = cs). The strides of size-1 dims are
 * irrelevant and normalised first. Returns false when neither works (then copy). */
static bool kd_mm_blas_layout(int64_t r, int64_t c, int64_t rs, int64_t cs, enum CBLAS_TRANSPOSE *tr, int *ld) {
  if (r > INT_MAX || c > INT_MAX) return false;
  int64_t rrs = r == 1 ? (c > 1 ? c : 1) : rs, rcs = c == 1 ? 1 : cs; /* as row-major */
  if (rcs == 1 && rrs >= (c > 1 ? c : 1) && rrs <= INT_MAX) {
    *tr = CblasNoTrans;
    *ld = (int)rrs;
    return true;
  }
  int64_t crs = r == 1 ? 1 : rs, ccs = c == 1 ? (r > 1 ? r : 1) : cs; /* as column-major */
  if (crs == 1 && ccs >= (r > 1 ? r : 1) && ccs <= INT_MAX) {
    *tr = CblasTrans;
    *ld = (int)ccs;
    return true;
  }
  return false;
}

/* Copies `batch` r x c matrices of 4- or 8-byte elements to a new contiguous buffer
 * (row-major, batch stride r*c). */
static kd_status kd_mm_pack_contiguous(const kd_mm_operand *src, int64_t batch, int64_t r, int64_t c, size_t es,
                                       char **out) {
  char *buf = (char *)malloc((size_t)(batch * r * c) * es);
  if (!buf) return kd_error(KD_ERR_OOM, "out of host memory copying a matmul operand");
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < r; i++) {
      const char *s = src->data + (b * src->bs + i * src->rs) * (int64_t)es;
      int64_t o = (b * r + i) * c;
      if (es == 4)
        for (int64_t j = 0; j < c; j++) ((uint32_t *)buf)[o + j] = *(const uint32_t *)(s + j * src->cs * 4);
      else
        for (int64_t j = 0; j < c; j++) ((uint64_t *)buf)[o + j] = *(const uint64_t *)(s + j * src->cs * 8);
    }
  *out = buf;
  return KD_OK;
}

typedef struct kd_mm_blas_job {
  kd_dtype dtype;
  int m, n, k;
  enum CBLAS_TRANSPOSE ta, tb;
  int lda, ldb;
  const char *a, *b;
  int64_t a_bs, b_bs; /* in elements */
  int incx;           /* > 0: matrix-vector via gemv (n == 1: x is B's column; m == 1: A's row) */
  char *c;
  double alpha, beta; /* C = alpha * A @ B + beta * C (mm/bmm: 1 and 0; addmm/baddbmm: C holds self) */
} kd_mm_blas_job;

/* y = op(M) x with M stored row-major as rows x cols (ld), for float32 or float64. */
static void kd_mm_gemv(kd_dtype dt, enum CBLAS_TRANSPOSE t, int rows, int cols, const char *mat, int ld,
                       const char *x, int incx, char *y, double alpha, double beta) {
  if (dt == KD_DTYPE_F32)
    cblas_sgemv(CblasRowMajor, t, rows, cols, (float)alpha, (const float *)mat, ld, (const float *)x, incx, (float)beta,
                (float *)y, 1);
  else
    cblas_dgemv(CblasRowMajor, t, rows, cols, alpha, (const double *)mat, ld, (const double *)x, incx, beta, (double *)y, 1);
}

static void kd_mm_blas_batches(void *ctx, int64_t b0, int64_t b1) {
  const kd_mm_blas_job *j = (const kd_mm_blas_job *)ctx;
  size_t es = kd_dtype_size(j->dtype);
  int ldc = j->n > 1 ? j->n : 1;
  for (int64_t bi = b0; bi < b1; bi++) {
    const char *a = j->a + bi * j->a_bs * (int64_t)es, *b = j->b + bi * j->b_bs * (int64_t)es;
    char *c = j->c + bi * (int64_t)j->m * j->n * (int64_t)es;
    if (j->incx > 0 && j->n == 1) { /* c (m) = A (m x k) @ b (k): A as stored, NoTrans or Trans */
      if (j->ta == CblasNoTrans) kd_mm_gemv(j->dtype, CblasNoTrans, j->m, j->k, a, j->lda, b, j->incx, c, j->alpha, j->beta);
      else kd_mm_gemv(j->dtype, CblasTrans, j->k, j->m, a, j->lda, b, j->incx, c, j->alpha, j->beta);
    } else if (j->incx > 0) { /* m == 1: c (n) = B^T (n x k) @ a (k) */
      if (j->tb == CblasNoTrans) kd_mm_gemv(j->dtype, CblasTrans, j->k, j->n, b, j->ldb, a, j->incx, c, j->alpha, j->beta);
      else kd_mm_gemv(j->dtype, CblasNoTrans, j->n, j->k, b, j->ldb, a, j->incx, c, j->alpha, j->beta);
    } else if (j->dtype == KD_DTYPE_F32)
      cblas_sgemm(CblasRowMajor, j->ta, j->tb, j->m, j->n, j->k, (float)j->alpha, (const float *)a, j->lda,
                  (const float *)b, j->ldb, (float)j->beta, (float *)c, ldc);
    else
      cblas_dgemm(CblasRowMajor, j->ta, j->tb, j->m, j->n, j->k, j->alpha, (const double *)a, j->lda,
                  (const double *)b, j->ldb, j->beta, (double *)c, ldc);
  }
}

/* BLAS path for float32/float64; *done = false when the sizes do not fit BLAS's int. */
static kd_status kd_mm_blas(kd_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k, kd_mm_operand a,
                            kd_mm_operand b, char *c, double alpha, double beta, bool *done) {
  *done = false;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return KD_OK;
  size_t es = kd_dtype_size(dtype);
  kd_mm_blas_job j;
  j.dtype = dtype;
  j.m = (int)m; j.n = (int)n; j.k = (int)k;
  char *abuf = NULL, *bbuf = NULL;
  if (!kd_mm_blas_layout(m, k, a.rs, a.cs, &j.ta, &j.lda)) {
    KD_TRY(kd_mm_pack_contiguous(&a, batch, m, k, es, &abuf));
    a.data = abuf; a.bs = m * k; a.rs = k; a.cs = 1;
    kd_mm_blas_layout(m, k, a.rs, a.cs, &j.ta, &j.lda);
  }
  if (!kd_mm_blas_layout(k, n, b.rs, b.cs, &j.tb, &j.ldb)) {
    kd_status st = kd_mm_pack_contiguous(&b, batch, k, n, es, &bbuf);
    if (st != KD_OK) { free(abuf); return st; }
    b.data = bbuf; b.bs = k * n; b.rs = n; b.cs = 1;
    kd_mm_blas_layout(k, n, b.rs, b.cs, &j.tb, &j.ldb);
  }
  j.a = a.data; j.a_bs = a.bs;
  j.b = b.data; j.b_bs = b.bs;
  /* Matrix-vector products (one output row or column) go to gemv, as PyTorch's mv does;
   * the vector may have any positive stride. */
  int64_t vstride = n == 1 ? (k == 1 ? 1 : b.rs) : m == 1 ? (k == 1 ? 1 : a.cs) : 0;
  j.incx = (n == 1 || m == 1) && vstride > 0 && vstride <= INT_MAX ? (int)vstride : 0;
  j.c = c;
  j.alpha = alpha;
  j.beta = beta;
  kd_blas_sync_threads();
  /* OpenBLAS runs products below 64^3 multiply-adds on one thread; batches of those are
   * spread over kindling's pool instead (as PyTorch does). Larger ones: OpenBLAS threads. */
  if (batch > 1 && (double)m * (double)n * (double)k < 64.0 * 64 * 64) {
    j.incx = 0; /* gemm only: OpenBLAS threads gemv from smaller sizes, and pool threads must not nest it */
    kd_parallel_for(0, batch, 1, kd_mm_blas_batches, &j);
  } else
    kd_mm_blas_batches(&j, 0, batch);
  free(abuf);
  free(bbuf);
  *done = true;
  return KD_OK;
}
#endif /* KD_HAVE_CBLAS */

/* ---- float16 / bfloat16 in float32 ----
 * `opcode` run on float32 copies of the tensor arguments args[0, ntensors) (THE conversion loop,
 * exact), its result rounded to dt once: float32 accumulation, as the blocked kernel and CUDA do.
 * addmm/baddbmm always take this route; mm/bmm take it where sgemm beats the blocked kernel
 * (kd_mm_half_in_float32) and the bfloat16 kernel of gemm_bf16.c does not apply. */
static kd_status kd_mm_in_float32(int opcode, kd_value *args, int ntensors, int nargs, kd_dtype dt, kd_value *outs) {
  kd_value v[5];
  kd_tensor *c[3] = {NULL, NULL, NULL}, *r32 = NULL, *r = NULL;
  kd_status st = KD_OK;
  for (int i = 0; i < nargs; i++) v[i] = args[i];
  for (int i = 0; i < ntensors && st == KD_OK; i++) {
    st = kd_cpu_cast(args[i].v.t, KD_DTYPE_F32, false, &c[i]);
    if (st == KD_OK) v[i] = kd_value_tensor(c[i]);
  }
  if (st == KD_OK) st = kd_call1(opcode, v, &r32);
  if (st == KD_OK) st = kd_cpu_cast(r32, dt, true, &r);
  for (int i = 0; i < ntensors; i++)
    if (c[i]) kd_tensor_release(c[i]);
  if (r32) kd_tensor_release(r32);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}

/* Whether a float16/bfloat16 mm/bmm of these sizes on a's device runs in float32 through sgemm:
 * on the CPU, from 32^3 multiply-adds up (the blocked kernel is several times slower there),
 * unless the bfloat16 kernel takes it. */
static bool kd_mm_half_in_float32(const kd_tensor *a, int64_t batch, int64_t m, int64_t n, int64_t k) {
#if KD_HAVE_CBLAS
  bool half = a->dtype == KD_DTYPE_F16 || (a->dtype == KD_DTYPE_BF16 && !kd_gemm_bf16_available());
  return half && kd_tensor_device(a).type == KD_DEVICE_CPU && batch > 0 &&
         (double)m * (double)n * (double)k >= 32.0 * 32 * 32;
#else
  (void)a; (void)batch; (void)m; (void)n; (void)k;
  return false;
#endif
}

/* C (contiguous batch x m x n, already allocated) = A @ B for every batch. */
static kd_status kd_mm_run(kd_device dev, kd_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                           kd_mm_operand a, kd_mm_operand b, char *c) {
  if (batch == 0 || m == 0 || n == 0) return KD_OK;
  if (dev.type != KD_DEVICE_CPU) { /* a device kernel (kd_cpu_device_mm, set by the device's backend) */
    if (!kd_cpu_device_mm) return kd_error(KD_ERR_NOT_SUPPORTED, "no matrix product kernel is registered for this device");
    return kd_cpu_device_mm(dev, dtype, batch, m, n, k, a.data, a.bs, a.rs, a.cs, b.data, b.bs, b.rs, b.cs, c);
  }
  if (k == 0) {
    memset(c, 0, (size_t)(batch * m * n) * kd_dtype_size(dtype));
    return KD_OK;
  }
  if (dtype == KD_DTYPE_BF16 && kd_gemm_bf16_available() && (double)m * (double)n * (double)k >= 32.0 * 32 * 32) {
    bool done;
    KD_TRY(kd_gemm_bf16(batch, m, n, k, a.data, a.bs, a.rs, a.cs, b.data, b.bs, b.rs, b.cs, c, &done));
    if (done) return KD_OK;
  }
#if KD_HAVE_CBLAS
  if (dtype == KD_DTYPE_F32 || dtype == KD_DTYPE_F64) {
    bool done;
    KD_TRY(kd_mm_blas(dtype, batch, m, n, k, a, b, c, 1.0, 0.0, &done));
    if (done) return KD_OK;
  }
#endif
  return kd_gemm_blocked(dtype, batch, m, n, k, a.data, a.bs, a.rs, a.cs, b.data, b.bs, b.rs, b.cs, c);
}

KD_KERNEL(kd_cpu_mm) {
  (void)op;
  (void)ks;
  const kd_tensor *a = args[0].v.t, *b = args[1].v.t;
  if (a->ndim != 2) return kd_error(KD_ERR_SHAPE, "self must be a matrix");
  if (b->ndim != 2) return kd_error(KD_ERR_SHAPE, "mat2 must be a matrix");
  int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
  if (b->sizes[0] != k)
    return kd_error(KD_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                    (long long)m, (long long)k, (long long)b->sizes[0], (long long)n);
  if (a->dtype != b->dtype)
    return kd_error(KD_ERR_DTYPE, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                    kd_mm_cpp_name(a->dtype), kd_mm_cpp_name(b->dtype));
  if (a->dtype == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"addmm_impl_cpu_\" not implemented for '%s'", kd_mm_scalar_name(a->dtype));
  if (kd_mm_half_in_float32(a, 1, m, n, k)) return kd_mm_in_float32(KD_OP_mm, args, 2, 2, a->dtype, outs);
  int64_t sizes[2] = {m, n};
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(sizes, 2, a->dtype, kd_tensor_device(a), &out));
  kd_mm_operand oa = {kd_tensor_data(a), 0, a->strides[0], a->strides[1]};
  kd_mm_operand ob = {kd_tensor_data(b), 0, b->strides[0], b->strides[1]};
  kd_status st = kd_mm_run(kd_tensor_device(a), a->dtype, 1, m, n, k, oa, ob, kd_tensor_data(out));
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_bmm) {
  (void)op;
  (void)ks;
  const kd_tensor *a = args[0].v.t, *b = args[1].v.t;
  if (a->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch1 must be a 3D tensor");
  if (b->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch2 must be a 3D tensor");
  int64_t bs = a->sizes[0], m = a->sizes[1], k = a->sizes[2], n = b->sizes[2];
  if (b->sizes[0] != bs || b->sizes[1] != k)
    return kd_error(KD_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                    (long long)bs, (long long)k, (long long)b->sizes[0], (long long)b->sizes[1]);
  if (a->dtype != b->dtype)
    return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_mm_scalar_name(a->dtype),
                    kd_mm_scalar_name(b->dtype));
  if (a->dtype == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"bmm\" not implemented for '%s'", kd_mm_scalar_name(a->dtype));
  if (kd_mm_half_in_float32(a, bs, m, n, k)) return kd_mm_in_float32(KD_OP_bmm, args, 2, 2, a->dtype, outs);
  int64_t sizes[3] = {bs, m, n};
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(sizes, 3, a->dtype, kd_tensor_device(a), &out));
  kd_mm_operand oa = {kd_tensor_data(a), a->strides[0], a->strides[1], a->strides[2]};
  kd_mm_operand ob = {kd_tensor_data(b), b->strides[0], b->strides[1], b->strides[2]};
  kd_status st = kd_mm_run(kd_tensor_device(a), a->dtype, bs, m, n, k, oa, ob, kd_tensor_data(out));
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- addmm / baddbmm: beta * self + alpha * (mat1 @ mat2), codes KD_ADDMM_MM / KD_ADDMM_BMM ----
 * float32/float64 with BLAS: self is broadcast-copied into the output, which the gemm then
 * accumulates into with beta (one pass over C, as PyTorch does; beta == 0 skips the copy, so
 * NaN in self is ignored). Other dtypes: the product through mm/bmm, then mul/add. */

/* out = beta * self_exp + alpha * prod through the pointwise ops (the non-BLAS path). */
static kd_status kd_addmm_combine(kd_tensor *self_exp, kd_tensor *prod, kd_scalar beta, kd_scalar alpha,
                                  kd_tensor **out) {
  kd_tensor *p = prod, *q = NULL, *r = NULL;
  kd_tensor_retain(p);
  kd_status st = KD_OK;
  if (kd_scalar_to_double(alpha) != 1.0) {
    kd_value v[2] = {kd_value_tensor(p), kd_value_scalar(alpha)};
    st = kd_call1(KD_OP_mul, v, &q);
    kd_tensor_release(p);
    p = q;
    if (st != KD_OK) return st;
  }
  if (kd_scalar_to_double(beta) == 0.0) {
    *out = p;
    return KD_OK;
  }
  kd_value v[3] = {kd_value_tensor(p), kd_value_tensor(self_exp), kd_value_scalar(beta)};
  st = kd_call1(KD_OP_add, v, &r); /* p + beta * self */
  kd_tensor_release(p);
  if (st != KD_OK) return st;
  *out = r;
  return KD_OK;
}

KD_KERNEL(kd_cpu_addmm) {
  (void)ks;
  bool batched = op->code == KD_ADDMM_BMM;
  kd_tensor *self = args[0].v.t, *a = args[1].v.t, *b = args[2].v.t;
  kd_scalar beta = args[3].v.s, alpha = args[4].v.s;
  int nd = batched ? 3 : 2;
  if (batched) {
    if (a->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch1 must be a 3D tensor");
    if (b->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch2 must be a 3D tensor");
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2])
      return kd_error(KD_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but "
                      "got: [%lld, %lld].", (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                      (long long)b->sizes[1]);
  } else {
    if (a->ndim != 2) return kd_error(KD_ERR_SHAPE, "mat1 must be a matrix, got %d-D tensor", a->ndim);
    if (b->ndim != 2) return kd_error(KD_ERR_SHAPE, "mat2 must be a matrix, got %d-D tensor", b->ndim);
    if (b->sizes[0] != a->sizes[1])
      return kd_error(KD_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                      (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
  }
  if (a->dtype != b->dtype || self->dtype != a->dtype) {
    kd_dtype want = a->dtype != b->dtype ? a->dtype : self->dtype, got = a->dtype != b->dtype ? b->dtype : a->dtype;
    if (batched)
      return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_mm_scalar_name(want), kd_mm_scalar_name(got));
    return kd_error(KD_ERR_DTYPE, a->dtype != b->dtype ? "mat1 and mat2 must have the same dtype"
                                                       : "self and mat2 must have the same dtype");
  }
  if (a->dtype == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for 'Bool'", batched ? "baddbmm_cpu" : "addmm_impl_cpu_");
  kd_dtype dt = a->dtype;
  if (dt == KD_DTYPE_F16 || dt == KD_DTYPE_BF16) /* in float32, rounded once at the end */
    return kd_mm_in_float32(batched ? KD_OP_baddbmm : KD_OP_addmm, args, 3, 5, dt, outs);
  if (!kd_dtype_is_float(dt)) { /* PyTorch casts alpha and beta to the integer type */
    alpha = kd_scalar_i(kd_scalar_to_int(alpha));
    beta = kd_scalar_i(kd_scalar_to_int(beta));
  }
  int64_t batch = batched ? a->sizes[0] : 1, m = a->sizes[nd - 2], k = a->sizes[nd - 1], n = b->sizes[nd - 1];
  int64_t osz[3] = {batch, m, n};
  const int64_t *sizes = batched ? osz : osz + 1;
  kd_tensor *self_exp;
  {
    kd_value v[2] = {kd_value_tensor(self), kd_value_intlist(sizes, nd)};
    KD_TRY(kd_call1(KD_OP_expand, v, &self_exp));
  }
  kd_status st = KD_OK;
  kd_tensor *out = NULL;
  double beta_d = kd_scalar_to_double(beta);
#if KD_HAVE_CBLAS
  if ((dt == KD_DTYPE_F32 || dt == KD_DTYPE_F64) && k > 0 && m > 0 && n > 0 && batch > 0 &&
      kd_tensor_device(a).type == KD_DEVICE_CPU) {
    st = kd_tensor_empty(sizes, nd, dt, kd_tensor_device(a), &out);
    if (st == KD_OK && beta_d != 0.0) st = kd_cpu_copy_into(out, self_exp);
    bool done = false;
    if (st == KD_OK) {
      kd_mm_operand oa = {kd_tensor_data(a), batched ? a->strides[0] : 0, a->strides[nd - 2], a->strides[nd - 1]};
      kd_mm_operand ob = {kd_tensor_data(b), batched ? b->strides[0] : 0, b->strides[nd - 2], b->strides[nd - 1]};
      st = kd_mm_blas(dt, batch, m, n, k, oa, ob, kd_tensor_data(out), kd_scalar_to_double(alpha), beta_d, &done);
    }
    if (st == KD_OK && done) {
      kd_tensor_release(self_exp);
      kd_out_take(outs, 0, out);
      return KD_OK;
    }
    if (out) kd_tensor_release(out);
    out = NULL;
  }
#endif
  if (st == KD_OK) {
    kd_tensor *prod = NULL;
    kd_value v[2] = {kd_value_tensor(a), kd_value_tensor(b)};
    st = kd_call1(batched ? KD_OP_bmm : KD_OP_mm, v, &prod);
    if (st == KD_OK) {
      st = kd_addmm_combine(self_exp, prod, beta, alpha, &out);
      kd_tensor_release(prod);
    }
  }
  kd_tensor_release(self_exp);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}
