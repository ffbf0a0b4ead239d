/* cublas_handle.h - the emulated cuBLAS handle, shared by cublas.cpp (gemms, the handle's entry
 * points) and cublas_lu.cpp (triangular solves and batched LU). */
#ifndef KD_EMU_CUBLAS_HANDLE_H
#define KD_EMU_CUBLAS_HANDLE_H

#include "cublas_v2.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  void *workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

#endif
