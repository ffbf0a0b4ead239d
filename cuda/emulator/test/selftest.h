/* selftest.h - what the emulated GPU's self-test files (selftest.cu, selftest_solver.cu) share:
 * the failure count, CHECK (prints one FAIL line and leaves the test function), CK for CUDA
 * calls, and dev_buf, a device buffer filled and read with synchronous copies. */
#ifndef KD_EMU_SELFTEST_H
#define KD_EMU_SELFTEST_H

#include <stdio.h>

#include <vector>

extern int g_failed;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      printf("FAIL %s:%d: ", __func__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
      g_failed++;                                 \
      return;                                     \
    }                                             \
  } while (0)
#define CK(call) CHECK((call) == cudaSuccess, "%s: %s", #call, cudaGetErrorName(cudaGetLastError()))

template <typename T>
struct dev_buf {
  T *p = nullptr;
  size_t n;
  explicit dev_buf(size_t count) : n(count) {
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) p = nullptr;
    if (p) cudaMemset(p, 0, n * sizeof(T));
  }
  ~dev_buf() { cudaFree(p); }
  dev_buf(const dev_buf &) = delete;
  dev_buf &operator=(const dev_buf &) = delete;
  std::vector<T> get() const {
    std::vector<T> v(n);
    cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }
  void put(const std::vector<T> &v) { cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice); }
};

/* selftest_solver.cu */
void test_cusolver_lu();
void test_cusolver_cholesky();
void test_cusolver_qr();
void test_cusolver_svd();
void test_cusolver_eig();
void test_cublas_lu();
void test_solver_array_fault();
/* selftest_graph.cu */
void test_graph_capture();

#endif
