/* selftest.cu - checks that the emulated GPU behaves as CUDA specifies where kindling's kernels
 * depend on it: built-in indices, barriers, warp shuffles, atomics, an H100's launch limits with
 * CUDA's error codes (sticky and not), a varying thread and block order, asynchronous streams
 * (legacy default stream semantics, events, stream waits, host functions, races between streams),
 * device memory rules, cuBLAS and CUB (cuSOLVER and cuBLAS's LU routines: selftest_solver.cu).
 * Written in CUDA C++ with KD_LAUNCH, as kindling's kernels are; it reads the emulator's
 * counters, so it is built for the emulator only: by `node tools/build-emulator.js` (with every
 * .cu file of this folder) as build/Release/kd_emu_selftest, run (with 3 emulated devices)
 * by test/cuda_emulator.test.js. Prints one line per check; exits 1 if any failed. */
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "kd_cuda_internal.h"
#include "selftest.h"

extern "C" int kd_cuda_emulator_stats(kd_cuda_emu_stats *out);

int g_failed = 0;

/* ---- built-in variables ---- */
__global__ void k_ids(unsigned *out) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned i = b * blockDim.x * blockDim.y * blockDim.z + t;
  unsigned *o = out + 8 * i;
  o[0] = blockIdx.x; o[1] = blockIdx.y; o[2] = blockIdx.z;
  o[3] = threadIdx.x; o[4] = threadIdx.y; o[5] = threadIdx.z;
  o[6] = blockDim.x * 100 + gridDim.z;
  atomicAdd(&o[7], 1u);
}
static void test_builtins() {
  const dim3 g(2, 3, 4), b(4, 2, 3);
  const unsigned n = 2 * 3 * 4 * 4 * 2 * 3;
  dev_buf<unsigned> d(8 * n);
  KD_LAUNCH(g, b, 0, 0, k_ids)(d.p);
  CK(cudaGetLastError());
  auto v = d.get();
  for (unsigned bz = 0; bz < 4; bz++) for (unsigned by = 0; by < 3; by++) for (unsigned bx = 0; bx < 2; bx++)
    for (unsigned tz = 0; tz < 3; tz++) for (unsigned ty = 0; ty < 2; ty++) for (unsigned tx = 0; tx < 4; tx++) {
      const unsigned i = ((bz * 3 + by) * 2 + bx) * 24 + (tz * 2 + ty) * 4 + tx;
      const unsigned *o = &v[8 * i];
      CHECK(o[0] == bx && o[1] == by && o[2] == bz && o[3] == tx && o[4] == ty && o[5] == tz && o[6] == 404 && o[7] == 1,
            "thread %u: %u %u %u %u %u %u %u ran %u times", i, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]);
    }
  printf("ok built-in variables (3-D grid and block, every thread once)\n");
}

/* ---- barriers and shared memory ---- */
__global__ void k_rotate(int *out) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  s[t] = t * 3 + (int)blockIdx.x;
  __syncthreads();
  int v = s[(t + 1) % blockDim.x];
  __syncthreads();
  s[t] = v * 2; /* reuse after a second barrier */
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(t + 5) % blockDim.x];
}
__global__ void k_tree(int *out) {
  __shared__ int s[512];
  const int t = threadIdx.x;
  s[t] = t + 1;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
static void test_barriers() {
  dev_buf<int> d(4 * 256), r(3);
  KD_LAUNCH(4, 256, 0, 0, k_rotate)(d.p);
  KD_LAUNCH(3, 512, 0, 0, k_tree)(r.p);
  CK(cudaGetLastError());
  auto v = d.get();
  for (int b = 0; b < 4; b++)
    for (int t = 0; t < 256; t++) {
      const int src = (t + 5) % 256, expect = (((src + 1) % 256) * 3 + b) * 2;
      CHECK(v[b * 256 + t] == expect, "block %d thread %d: %d, expected %d", b, t, v[b * 256 + t], expect);
    }
  auto w = r.get();
  for (int b = 0; b < 3; b++) CHECK(w[b] == 512 * 513 / 2, "tree reduction of block %d: %d", b, w[b]);
  printf("ok __syncthreads and __shared__ (per block, reused after barriers)\n");
}

/* ---- warp shuffles ---- */
__global__ void k_shfl(int *out, int width) {
  const int t = threadIdx.x, n = blockDim.x;
  out[0 * n + t] = __shfl_down_sync(0xffffffffu, t * 10, 3, width);
  out[1 * n + t] = __shfl_up_sync(0xffffffffu, t * 10, 2, width);
  out[2 * n + t] = __shfl_xor_sync(0xffffffffu, t * 10, 5, width);
  out[3 * n + t] = __shfl_sync(0xffffffffu, t * 10, 7, width);
  double d = __shfl_down_sync(0xffffffffu, t * 0.5, 1, width);
  out[4 * n + t] = (int)(d * 2);
}
static void test_shuffles() {
  for (int width : {32, 8}) {
    const int n = 64;
    dev_buf<int> d(5 * n);
    KD_LAUNCH(1, n, 0, 0, k_shfl)(d.p, width);
    CK(cudaGetLastError());
    auto v = d.get();
    for (int t = 0; t < n; t++) {
      const int lane = t % 32, seg = lane % width, base = t - seg;
      const int down = seg + 3 < width ? t + 3 : t, up = seg >= 2 ? t - 2 : t, x = base + ((seg ^ 5) % width),
                idx = base + (7 % width), down1 = seg + 1 < width ? t + 1 : t;
      CHECK(v[t] == down * 10 && v[n + t] == up * 10 && v[2 * n + t] == x * 10 && v[3 * n + t] == idx * 10 &&
                v[4 * n + t] == down1,
            "width %d lane %d: down %d up %d xor %d idx %d double %d", width, t, v[t], v[n + t], v[2 * n + t],
            v[3 * n + t], v[4 * n + t]);
    }
  }
  printf("ok warp shuffles (down, up, xor, idx; widths 32 and 8; 64-bit values)\n");
}

/* ---- atomics ---- */
__global__ void k_atomics(int *i, float *f, double *d, unsigned long long *u, int *mn) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(i, 1);
  atomicAdd(f, 0.5f);
  atomicAdd(d, 0.25);
  atomicAdd(u, 2ull);
  atomicMin(mn, 1000 - t);
  int old = atomicCAS(i + 1, t, t + 1); /* a chain: succeeds only in order, at most once per thread */
  (void)old;
}
static void test_atomics() {
  dev_buf<int> i(2), mn(1);
  dev_buf<float> f(1);
  dev_buf<double> d(1);
  dev_buf<unsigned long long> u(1);
  mn.put({1 << 30});
  KD_LAUNCH(16, 256, 0, 0, k_atomics)(i.p, f.p, d.p, u.p, mn.p);
  CK(cudaGetLastError());
  auto iv = i.get();
  CHECK(iv[0] == 4096 && f.get()[0] == 2048.0f && d.get()[0] == 1024.0 && u.get()[0] == 8192 && mn.get()[0] == 1000 - 4095,
        "atomics: %d %f %f %llu %d", iv[0], f.get()[0], d.get()[0], u.get()[0], mn.get()[0]);
  CHECK(iv[1] >= 1 && iv[1] <= 4096, "atomicCAS chain %d", iv[1]);
  printf("ok atomics (int, float, double, u64 add; min; CAS)\n");
}

/* ---- launch limits ---- */
__global__ void k_nop(int *p) {
  if (p) p[0] = 1;
}
static void test_limits() {
  struct { dim3 g, b; size_t smem; cudaError_t e; const char *what; } cases[] = {
      {dim3(1), dim3(1025), 0, cudaErrorInvalidConfiguration, "1025 threads"},
      {dim3(1), dim3(32, 32, 2), 0, cudaErrorInvalidConfiguration, "2048 threads as 32x32x2"},
      {dim3(1), dim3(1, 1, 65), 0, cudaErrorInvalidConfiguration, "block z 65"},
      {dim3(1, 65536), dim3(1), 0, cudaErrorInvalidConfiguration, "grid y 65536"},
      {dim3(1, 1, 65536), dim3(1), 0, cudaErrorInvalidConfiguration, "grid z 65536"},
      {dim3(0), dim3(32), 0, cudaErrorInvalidConfiguration, "empty grid"},
      {dim3(1), dim3(0), 0, cudaErrorInvalidConfiguration, "empty block"},
      {dim3(1), dim3(32), (48 << 10) + 1, cudaErrorInvalidValue, "48 KiB + 1 of dynamic shared memory"},
      {dim3(2147483647u, 65535, 1), dim3(1024), 0, cudaSuccess, "the largest grid (validated, not run)"},
  };
  for (auto &c : cases) {
    if (c.e == cudaSuccess) continue; /* not run: 2^31 blocks would take hours on a CPU */
    KD_LAUNCH(c.g, c.b, c.smem, 0, k_nop)(nullptr);
    cudaError_t e = cudaGetLastError();
    CHECK(e == c.e, "%s: %s, expected %s", c.what, cudaGetErrorName(e), cudaGetErrorName(c.e));
    CHECK(cudaGetLastError() == cudaSuccess, "%s: the error is not cleared by cudaGetLastError", c.what);
  }
  CK(cudaFuncSetAttribute(k_nop, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
  KD_LAUNCH(1, 32, 100 << 10, 0, k_nop)(nullptr);
  CK(cudaGetLastError());
  KD_LAUNCH(1, 32, (100 << 10) + 1, 0, k_nop)(nullptr);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue, "over the opted-in shared memory");
  CHECK(cudaFuncSetAttribute(k_nop, cudaFuncAttributeMaxDynamicSharedMemorySize, (227 << 10) + 1) == cudaErrorInvalidValue,
        "opt-in over 227 KiB");
  cudaGetLastError();
  KD_LAUNCH(dim3(1, 65535, 1), dim3(1), 0, 0, k_nop)(nullptr);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  printf("ok launch limits (threads per block, grid y/z, empty, shared memory opt-in; errors not sticky)\n");
}

/* ---- order ---- */
__global__ void k_order(int *order, int *next) {
  const int slot = atomicAdd(next, 1);
  order[slot] = blockIdx.x * blockDim.x + threadIdx.x;
}
static void test_order() {
  const int nb = 8, nt = 64;
  dev_buf<int> o1(nb * nt), o2(nb * nt), n1(1), n2(1);
  KD_LAUNCH(nb, nt, 0, 0, k_order)(o1.p, n1.p);
  KD_LAUNCH(nb, nt, 0, 0, k_order)(o2.p, n2.p);
  CK(cudaGetLastError());
  auto a = o1.get(), b = o2.get();
  std::vector<int> s = a;
  std::sort(s.begin(), s.end());
  for (int i = 0; i < nb * nt; i++) CHECK(s[i] == i, "thread %d ran %s", i, "not exactly once");
  bool identity = true, same = a == b, blocks_in_order = true;
  for (int i = 0; i < nb * nt; i++) identity = identity && a[i] == i;
  for (int i = 1; i < nb * nt; i++) blocks_in_order = blocks_in_order && a[i] / nt >= a[i - 1] / nt;
  CHECK(!identity && !same && !blocks_in_order, "order: identity %d, same in two launches %d, blocks in order %d", identity,
        same, blocks_in_order);
  printf("ok thread and block order varies (between launches, within and across blocks)\n");
}

/* ---- streams ---- */
__global__ void k_spin_write(long long cycles, int *p, int v) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (p) *p = v;
}
__global__ void k_copy1(const int *src, int *dst) { *dst = *src; }
static const long long k50ms = 1755000ll * 50;

static pthread_t g_host_thread;
static int g_host_fn_saw = -1;
static void host_fn(void *arg) {
  g_host_fn_saw = pthread_equal(pthread_self(), g_host_thread) ? 0 : *(int *)arg;
}

static void test_streams() {
  cudaStream_t s1, s2, nb;
  CK(cudaStreamCreate(&s1));
  CK(cudaStreamCreate(&s2));
  CK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  dev_buf<int> x(1), y(1), z(1);
  int *pinned = nullptr;
  CK(cudaHostAlloc((void **)&pinned, sizeof(int), 0));
  /* the host races ahead */
  KD_LAUNCH(1, 1, 0, s1, k_spin_write)(k50ms, x.p, 7);
  CHECK(cudaStreamQuery(s1) == cudaErrorNotReady, "the host waited for the kernel");
  /* legacy stream waits for blocking stream s1; non-blocking stream does not */
  KD_LAUNCH(1, 1, 0, 0, k_copy1)(x.p, y.p);
  KD_LAUNCH(1, 1, 0, nb, k_copy1)(x.p, z.p);
  CK(cudaStreamSynchronize(nb));
  CHECK(cudaStreamQuery(s1) == cudaErrorNotReady, "non-blocking stream waited for s1");
  CK(cudaDeviceSynchronize());
  CHECK(y.get()[0] == 7, "the legacy stream did not wait for s1 (read %d)", y.get()[0]);
  CHECK(z.get()[0] == 0, "a race between streams was hidden (read %d)", z.get()[0]);
  /* events: record, query, wait, elapsed time */
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemsetAsync(x.p, 0, sizeof(int), s1));
  CK(cudaEventRecord(e0, s1));
  KD_LAUNCH(1, 1, 0, s1, k_spin_write)(k50ms, x.p, 9);
  CK(cudaEventRecord(e1, s1));
  CHECK(cudaEventQuery(e1) == cudaErrorNotReady, "event complete before its work");
  CK(cudaStreamWaitEvent(s2, e1, 0));
  KD_LAUNCH(1, 1, 0, s2, k_copy1)(x.p, y.p);
  CK(cudaMemcpyAsync(pinned, y.p, sizeof(int), cudaMemcpyDeviceToHost, s2));
  g_host_thread = pthread_self();
  static int tag = 42;
  CK(cudaLaunchHostFunc(s2, host_fn, &tag));
  CK(cudaStreamSynchronize(s2));
  CHECK(*pinned == 9, "cudaStreamWaitEvent: s2 read %d", *pinned);
  CHECK(g_host_fn_saw == 42, "host function: %d (0: ran on the calling thread)", g_host_fn_saw);
  float ms = 0;
  CK(cudaEventSynchronize(e1));
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CHECK(ms > 30 && ms < 5000, "elapsed %f ms for a 50 ms kernel", ms);
  cudaEvent_t never;
  CK(cudaEventCreateWithFlags(&never, cudaEventDisableTiming));
  CHECK(cudaEventQuery(never) == cudaSuccess, "a never-recorded event is complete");
  CHECK(cudaEventElapsedTime(&ms, never, e1) == cudaErrorInvalidResourceHandle, "timing a DisableTiming event");
  cudaGetLastError();
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaEventDestroy(never);
  cudaFreeHost(pinned);
  CK(cudaStreamDestroy(s1));
  printf("ok streams (asynchronous; legacy stream semantics; events; stream waits; host functions on a runtime thread; races visible)\n");
}

/* ---- memory ---- */
static void test_memory() {
  size_t fr = 0, total = 0;
  CK(cudaMemGetInfo(&fr, &total));
  void *big = nullptr;
  CHECK(cudaMalloc(&big, total + 1) == cudaErrorMemoryAllocation, "allocating more than the device has");
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation && cudaGetLastError() == cudaSuccess, "OOM is not sticky");
  dev_buf<int> d(16);
  int host[16] = {0};
  cudaPointerAttributes a;
  CK(cudaPointerGetAttributes(&a, d.p + 3));
  CHECK(a.type == cudaMemoryTypeDevice && a.device == 0, "device pointer attributes %d %d", a.type, a.device);
  CK(cudaPointerGetAttributes(&a, host));
  CHECK(a.type == cudaMemoryTypeUnregistered, "pageable pointer attributes %d", a.type);
  CHECK(cudaMemcpy(d.p + 8, host, 9 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "copy past an allocation");
  CHECK(cudaMemcpy(host, host + 1, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "a host pointer as a device one");
  cudaGetLastError();
  /* pageable H2D: staged, so the source may change right after the call */
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  KD_LAUNCH(1, 1, 0, s, k_spin_write)(k50ms / 5, nullptr, 0);
  host[0] = 5;
  CK(cudaMemcpyAsync(d.p, host, sizeof(int), cudaMemcpyHostToDevice, s));
  host[0] = 6;
  kd_cuda_emu_stats st0, st1;
  kd_cuda_emulator_stats(&st0);
  int back = 0;
  CK(cudaMemcpyAsync(&back, d.p, sizeof(int), cudaMemcpyDeviceToHost, s)); /* to pageable: returns when done */
  kd_cuda_emulator_stats(&st1);
  CHECK(back == 5, "pageable copies: read %d", back);
  CHECK(st1.syncs == st0.syncs + 1 && st1.d2h_bytes == st0.d2h_bytes + 4, "a copy to pageable memory counts as a sync");
  /* peer copy */
  int prev = 0;
  cudaGetDevice(&prev);
  CK(cudaSetDevice(1));
  int *d1 = nullptr;
  CK(cudaMalloc(&d1, 16 * sizeof(int)));
  CK(cudaMemcpyPeer(d1, 1, d.p, 0, 16 * sizeof(int)));
  CK(cudaMemcpy(host, d1, 16 * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(host[0] == 5, "peer copy %d", host[0]);
  cudaFree(d1);
  cudaSetDevice(prev);
  cudaStreamDestroy(s);
  printf("ok memory (capacity and OOM, pointer attributes, range checks, pageable staging, peer copies)\n");
}

/* ---- cuBLAS ---- */
static void test_cublas() {
  const int m = 5, n = 4, k = 3, lda = 7, ldb = 6, ldc = 8;
  std::vector<float> A(lda * m), B(ldb * n), C(ldc * n, 1.0f);
  for (size_t i = 0; i < A.size(); i++) A[i] = (float)((i * 7) % 11) - 5;
  for (size_t i = 0; i < B.size(); i++) B[i] = (float)((i * 5) % 13) - 6;
  dev_buf<float> a(A.size()), b(B.size()), c(C.size());
  a.put(A);
  b.put(B);
  c.put(C);
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  const float alpha = 2, beta = 0.5f;
  /* C = alpha * A^T(m x k) * B(k x n) + beta * C, A stored k x m (lda 7), B k x n (ldb 6) */
  CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.p, CUDA_R_32F, lda, b.p, CUDA_R_32F, ldb, &beta, c.p,
                     CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS, "gemm");
  auto got = c.get();
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double ref = 0.5;
      for (int p = 0; p < k; p++) ref += 2.0 * A[i * lda + p] * B[j * ldb + p];
      CHECK(got[j * ldc + i] == (float)ref, "C[%d,%d] = %f, expected %f", i, j, got[j * ldc + i], ref);
    }
  CHECK(got[m] == 1.0f, "rows past m were written");
  CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.p, CUDA_R_32F, m - 1, b.p, CUDA_R_32F, ldb, &beta,
                     c.p, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
        "lda < m accepted");
  /* TF32: 1 + 2^-12 rounds to 1 */
  std::vector<float> one = {1.0f + 1.0f / 4096};
  dev_buf<float> x(1), y(1), r(1);
  x.put(one);
  y.put({1.0f});
  const float z = 0;
  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &alpha, x.p, CUDA_R_32F, 1, y.p, CUDA_R_32F, 1, &z, r.p, CUDA_R_32F, 1,
               CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  CHECK(r.get()[0] == 2.0f, "TF32 product %.9g", r.get()[0]);
  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &alpha, x.p, CUDA_R_32F, 1, y.p, CUDA_R_32F, 1, &z, r.p, CUDA_R_32F, 1,
               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  CHECK(r.get()[0] == 2.0f + 2.0f / 4096, "float32 product %.9g", r.get()[0]);
  /* float16 in, float32 out, batched with a shared B (stride 0) */
  dev_buf<__half> ha(2 * 4), hb(2);
  std::vector<__half> hav(8), hbv = {__float2half_rn(1.5f), __float2half_rn(-2.0f)};
  for (int i = 0; i < 8; i++) hav[i] = __float2half_rn((float)i);
  ha.put(hav);
  hb.put(hbv);
  dev_buf<float> hc(2 * 2);
  const float one_f = 1;
  CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one_f, ha.p, CUDA_R_16F, 2, 4, hb.p, CUDA_R_16F,
                                   2, 0, &z, hc.p, CUDA_R_32F, 2, 2, 2, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS, "batched f16");
  auto hcv = hc.get();
  CHECK(hcv[0] == 0 * 1.5f - 2 * 2.0f && hcv[1] == 1 * 1.5f - 3 * 2.0f && hcv[2] == 4 * 1.5f - 6 * 2.0f &&
            hcv[3] == 5 * 1.5f - 7 * 2.0f, "batched f16: %f %f %f %f", hcv[0], hcv[1], hcv[2], hcv[3]);
  cublasDestroy(h);
  printf("ok cuBLAS (column-major GemmEx with transposes and leading dimensions, TF32 rounding, f16 strided batches)\n");
}

/* ---- CUB ---- */
template <int B>
__global__ void k_block_scan(const int *in, int *out, int *agg) {
  typedef cub::BlockScan<int, B> Scan;
  __shared__ typename Scan::TempStorage tmp;
  int v = in[threadIdx.x], r, a;
  Scan(tmp).InclusiveScan(v, r, [](int x, int y) { return x + y; }, a);
  out[threadIdx.x] = r;
  if (threadIdx.x == 0) *agg = a;
}
static void test_cub() {
  const int n = 1000;
  std::vector<unsigned> keys(n);
  std::vector<int> vals(n);
  for (int i = 0; i < n; i++) {
    keys[i] = (unsigned)((i * 37) % 50) | (i % 3 == 0 ? 0x10000u : 0u); /* duplicates; bits above 16 */
    vals[i] = i;
  }
  dev_buf<unsigned> ki(n), ko(n);
  dev_buf<int> vi(n), vo(n);
  ki.put(keys);
  vi.put(vals);
  size_t bytes = 0;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, ki.p, ko.p, vi.p, vo.p, n, 0, 16));
  CHECK(bytes > 0, "no temporary storage asked for");
  dev_buf<char> tmp(bytes);
  size_t small = bytes - 1;
  CHECK(cub::DeviceRadixSort::SortPairs(tmp.p, small, ki.p, ko.p, vi.p, vo.p, n, 0, 16) != cudaSuccess,
        "too little temporary storage accepted");
  CK(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, ki.p, ko.p, vi.p, vo.p, n, 0, 16));
  auto k2 = ko.get();
  auto v2 = vo.get();
  std::vector<int> ref(n);
  for (int i = 0; i < n; i++) ref[i] = i;
  std::stable_sort(ref.begin(), ref.end(), [&](int a, int b) { return (keys[a] & 0xffff) < (keys[b] & 0xffff); });
  for (int i = 0; i < n; i++) CHECK(v2[i] == ref[i] && k2[i] == keys[ref[i]], "radix sort (bits 0-16) at %d", i);
  CK(cub::DeviceRadixSort::SortPairsDescending(tmp.p, bytes, ki.p, ko.p, vi.p, vo.p, n));
  v2 = vo.get();
  std::stable_sort(ref.begin(), ref.end(), [&](int a, int b) { return keys[a] > keys[b]; });
  for (int i = 0; i < n; i++) CHECK(v2[i] == ref[i], "descending radix sort (stable) at %d", i);
  /* segmented: segments [0,300) [300,300) [300,1000) */
  std::vector<int64_t> off = {0, 300, 300, 1000};
  dev_buf<int64_t> o(4);
  o.put(off);
  size_t sb = 0;
  CK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, sb, ki.p, ko.p, vi.p, vo.p, n, 3, o.p, o.p + 1));
  dev_buf<char> st(sb);
  CK(cub::DeviceSegmentedSort::StableSortPairs(st.p, sb, ki.p, ko.p, vi.p, vo.p, n, 3, o.p, o.p + 1));
  v2 = vo.get();
  for (int i = 0; i < n; i++) ref[i] = i;
  std::stable_sort(ref.begin(), ref.begin() + 300, [&](int a, int b) { return keys[a] < keys[b]; });
  std::stable_sort(ref.begin() + 300, ref.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  for (int i = 0; i < n; i++) CHECK(v2[i] == ref[i], "segmented stable sort at %d", i);
  /* inclusive sum */
  dev_buf<int64_t> in(n), out(n);
  std::vector<int64_t> ones(n, 3);
  in.put(ones);
  size_t scb = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, scb, in.p, out.p, n));
  dev_buf<char> sct(scb);
  CK(cub::DeviceScan::InclusiveSum(sct.p, scb, in.p, out.p, n));
  auto sc = out.get();
  for (int i = 0; i < n; i++) CHECK(sc[i] == 3 * (i + 1), "inclusive sum at %d: %lld", i, (long long)sc[i]);
  /* block scan */
  dev_buf<int> bi(128), bo(128), ba(1);
  std::vector<int> biv(128);
  for (int i = 0; i < 128; i++) biv[i] = i % 7;
  bi.put(biv);
  KD_LAUNCH(1, 128, 0, 0, k_block_scan<128>)(bi.p, bo.p, ba.p);
  CK(cudaGetLastError());
  auto bov = bo.get();
  int acc = 0;
  for (int i = 0; i < 128; i++) {
    acc += i % 7;
    CHECK(bov[i] == acc, "block scan at %d", i);
  }
  CHECK(ba.get()[0] == acc, "block aggregate");
  printf("ok CUB (radix sort with bit ranges and descending order, segmented stable sort, inclusive sum, BlockScan; temporary storage protocol)\n");
}

/* ---- faults are sticky (on devices 1 and 2, last) ---- */
__global__ void k_trap(int *p) {
  if (threadIdx.x == 3) __trap();
  p[threadIdx.x] = 1;
}
__global__ void k_deadlock(int *p) {
  if (threadIdx.x < 16) __syncthreads();
  else p[0] = __shfl_down_sync(0xffffffffu, 1, 1);
}
static void fault_on(int device, bool trap) {
  CK(cudaSetDevice(device));
  int *p = nullptr;
  CK(cudaMalloc(&p, 64 * sizeof(int)));
  if (trap) KD_LAUNCH(1, 32, 0, 0, k_trap)(p);
  else KD_LAUNCH(1, 32, 0, 0, k_deadlock)(p);
  cudaError_t e = cudaGetLastError(); /* the launch is valid; the fault may already be reported */
  CHECK(e == cudaSuccess || e == cudaErrorLaunchFailure, "launch: %s", cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  CHECK(e == cudaErrorLaunchFailure, "%s: %s", trap ? "__trap" : "a barrier not every thread reaches", cudaGetErrorName(e));
  void *q = nullptr;
  CHECK(cudaMalloc(&q, 16) == cudaErrorLaunchFailure, "the error is sticky");
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure && cudaGetLastError() == cudaErrorLaunchFailure,
        "cudaGetLastError cannot clear a sticky error");
}
static void test_faults() {
  int prev = 0;
  cudaGetDevice(&prev);
  const int failed = g_failed;
  fault_on(1, false);
  fault_on(2, true);
  if (g_failed != failed) return;
  CK(cudaSetDevice(0));
  void *q = nullptr;
  CK(cudaMalloc(&q, 16)); /* other devices are unaffected */
  cudaFree(q);
  cudaSetDevice(prev);
  printf("ok faults (a deadlocked barrier and __trap are sticky cudaErrorLaunchFailure on their device only)\n");
}

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 3) {
    printf("FAIL needs 3 devices (KINDLING_CUDA_EMU_DEVICES=3)\n");
    return 1;
  }
  test_builtins();
  test_barriers();
  test_shuffles();
  test_atomics();
  test_limits();
  test_order();
  test_streams();
  test_memory();
  test_cublas();
  test_cub();
  test_cusolver_lu();
  test_cusolver_cholesky();
  test_cusolver_qr();
  test_cusolver_svd();
  test_cusolver_eig();
  test_cublas_lu();
  test_graph_capture();
  test_faults();
  test_solver_array_fault(); /* leaves device 0 faulted */
  printf("%s: %d failed\n", g_failed ? "FAILED" : "passed", g_failed);
  return g_failed ? 1 : 0;
}
