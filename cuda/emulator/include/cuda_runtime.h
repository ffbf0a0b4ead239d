/* cuda_runtime.h (emulated GPU) - the part of the CUDA runtime API and of the CUDA C++ device
 * language that kindling's cuda/ sources use, for building those same sources with the host C++
 * compiler into libkindling_cuda_emu.so (tools/build.js --emulator). See docs/CUDA.md, "The
 * emulated GPU", and cuda/emulator/README.md for what is modelled and what is not.
 *
 * Device code: __global__/__device__ functions are plain C++; each GPU thread of a launch runs
 * the kernel on a fiber of its own (cuda/emulator/grid.cpp), so __syncthreads and warp shuffles
 * suspend a thread until its block (warp) arrives, exactly as on a GPU. threadIdx is a
 * thread-local of the host thread that runs the block, rewritten at every fiber switch;
 * blockIdx/blockDim/gridDim are set per block. __shared__ variables are function-local statics
 * per host thread: one host thread runs one block at a time, so they are shared by the block.
 *
 * Launch: KD_LAUNCH(grid, block, smem, stream, kernel)(args...) (kd_cuda_internal.h) becomes
 * kd_emu::launch(...)(args...), which copies the arguments and enqueues the grid on the stream. */
#ifndef KD_EMU_CUDA_RUNTIME_H
#define KD_EMU_CUDA_RUNTIME_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

/* The runtime's functions and the device built-ins' thread-locals are exported from
 * libkindling_cuda_emu.so (built with -fvisibility=hidden): a kindling extension's .cu sources,
 * compiled for the emulated GPU (kd.utils.cppExtension), link against that library and so launch
 * on the same emulated devices and streams as kindling's own kernels. */
#pragma GCC visibility push(default)

#define KD_CUDA_EMULATED 1
#define CUDART_VERSION 13000

/* ---- qualifiers ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local
#define __constant__ static
#define __managed__

/* ---- vector types ---- */
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

/* ---- errors (values as in CUDA 13's driver_types.h) ---- */
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidHostPointer = 16,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInsufficientDriver = 35,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorECCUncorrectable = 214,
  cudaErrorPeerAccessUnsupported = 217,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorInvalidAddressSpace = 717,
  cudaErrorInvalidPc = 718,
  cudaErrorLaunchFailure = 719,
  cudaErrorAssert = 710,
  cudaErrorSystemDriverMismatch = 803,
  cudaErrorCompatNotSupportedOnDevice = 804,
  cudaErrorIllegalState = 401,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureMerge = 902,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorStreamCaptureUnjoined = 904,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorStreamCaptureImplicit = 906,
  cudaErrorCapturedEvent = 907,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

/* ---- handles ---- */
struct CUstream_st;
struct CUevent_st;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
struct CUgraph_st;
struct CUgraphExec_st;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major;
  int minor;
  int multiProcessorCount;
  int clockRate;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int unifiedAddressing;
  int pciBusID;
  int pciDeviceID;
};

typedef void (*cudaHostFn_t)(void *userData);

/* ---- the runtime API (cuda/emulator/runtime.cpp, streams.cpp) ---- */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attributes, const void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream = 0);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream = 0);

cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* Stream capture and graphs (cuda/emulator/graph.cpp, Note [Emulated stream capture]). */
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus);
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out = 0);
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

/* The C++ overloads of cuda_runtime.h for typed pointers. */
template <typename T>
static inline cudaError_t cudaMalloc(T **devPtr, size_t size) { return cudaMalloc((void **)devPtr, size); }
template <typename T>
static inline cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaStream_t stream) {
  return cudaMallocAsync((void **)devPtr, size, stream);
}
template <typename T>
static inline cudaError_t cudaHostAlloc(T **pHost, size_t size, unsigned int flags) {
  return cudaHostAlloc((void **)pHost, size, flags);
}

/* ---- device built-ins ---- */
namespace kd_emu {
/* The block being run by this host thread (grid.cpp sets them). */
/* (The library's thread-locals stay in the default TLS model: it is dlopen'ed, and its
 * __shared__ arrays are too big for the static TLS block.) */
#define KD_EMU_TLS thread_local
extern KD_EMU_TLS uint3 tls_thread_idx;
extern KD_EMU_TLS uint3 tls_block_idx;
extern KD_EMU_TLS dim3 tls_block_dim;
extern KD_EMU_TLS dim3 tls_grid_dim;
/* Suspends the calling GPU thread until every (non-exited) thread of its block arrives. */
void syncthreads(void);
/* A warp exchange: the calling lane publishes `nbytes` of `value` and receives the bytes of
 * lane `src` (its own when src is outside 0..31 or names no live lane) into `out`. Every lane
 * of `mask` must call it, as __shfl_*_sync requires. */
void warp_exchange(unsigned mask, const void *value, void *out, size_t nbytes, int src);
/* The lane of the calling GPU thread (linear thread index % 32). */
int lane_id(void);
/* Cycles of a notional 1.5 GHz clock from the host's monotonic clock. */
long long clock64(void);
/* A device-side trap: the launch fails with cudaErrorLaunchFailure (sticky), the GPU thread ends. */
[[noreturn]] void trap(void);
}  // namespace kd_emu

#define threadIdx (kd_emu::tls_thread_idx)
#define blockIdx (kd_emu::tls_block_idx)
#define blockDim (kd_emu::tls_block_dim)
#define gridDim (kd_emu::tls_grid_dim)
static const int warpSize = 32;

static inline void __syncthreads(void) { kd_emu::syncthreads(); }
static inline long long clock64(void) { return kd_emu::clock64(); }
static inline void __trap(void) { kd_emu::trap(); }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

template <typename T>
static inline T kd_emu_shfl(unsigned mask, T v, int src) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "__shfl_*_sync of an unsupported type");
  T out;
  kd_emu::warp_exchange(mask, &v, &out, sizeof(T), src);
  return out;
}
/* width: lanes form segments of `width`; a source outside the caller's segment reads the caller's
 * own value (down/up) or wraps within the segment (idx/xor), as CUDA defines. */
template <typename T>
static inline T __shfl_sync(unsigned mask, T v, int srcLane, int width = 32) {
  const int lane = kd_emu::lane_id(), base = lane & ~(width - 1);
  return kd_emu_shfl(mask, v, base + (srcLane & (width - 1)));
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = kd_emu::lane_id(), seg = lane & (width - 1);
  return kd_emu_shfl(mask, v, seg + (int)delta < width ? lane + (int)delta : lane);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = kd_emu::lane_id(), seg = lane & (width - 1);
  return kd_emu_shfl(mask, v, seg >= (int)delta ? lane - (int)delta : lane);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
  const int lane = kd_emu::lane_id(), base = lane & ~(width - 1);
  return kd_emu_shfl(mask, v, base + ((lane ^ laneMask) & (width - 1)));
}

/* ---- atomics: real host atomics (blocks of different streams run on different host threads) ---- */
template <typename T>
static inline T kd_emu_atomic_rmw(T *p, T (*f)(T, T), T v) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic of an unsupported size");
  typedef typename std::conditional<sizeof(T) == 2, uint16_t,
                                    typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type U;
  U *q = (U *)(void *)p;
  U old = __atomic_load_n(q, __ATOMIC_RELAXED), nw;
  for (;;) {
    T o;
    memcpy(&o, &old, sizeof o);
    T n = f(o, v);
    memcpy(&nw, &n, sizeof nw);
    if (__atomic_compare_exchange_n(q, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return o;
  }
}
template <typename T>
static inline T atomicAdd(T *p, T v) {
  if constexpr (std::is_integral<T>::value) return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  else return kd_emu_atomic_rmw<T>(p, [](T a, T b) -> T { return a + b; }, v);
}
template <typename T>
static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <typename T>
static inline T atomicMin(T *p, T v) {
  return kd_emu_atomic_rmw<T>(p, [](T a, T b) -> T { return b < a ? b : a; }, v);
}
template <typename T>
static inline T atomicMax(T *p, T v) {
  return kd_emu_atomic_rmw<T>(p, [](T a, T b) -> T { return b > a ? b : a; }, v);
}
template <typename T>
static inline T atomicExch(T *p, T v) {
  return kd_emu_atomic_rmw<T>(p, [](T, T b) -> T { return b; }, v);
}
template <typename T>
static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T>
static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <typename T>
static inline T atomicCAS(T *p, T compare, T v) {
  __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}

/* ---- bit casts and intrinsics ---- */
static inline unsigned int __float_as_uint(float x) { unsigned int u; memcpy(&u, &x, 4); return u; }
static inline int __float_as_int(float x) { int u; memcpy(&u, &x, 4); return u; }
static inline float __uint_as_float(unsigned int u) { float x; memcpy(&x, &u, 4); return x; }
static inline float __int_as_float(int u) { float x; memcpy(&x, &u, 4); return x; }
static inline long long __double_as_longlong(double x) { long long u; memcpy(&u, &x, 8); return u; }
static inline double __longlong_as_double(long long u) { double x; memcpy(&x, &u, 8); return x; }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
template <typename T>
static inline T __ldg(const T *p) { return *p; }
/* fast-math intrinsics: the exact functions here (glibc declares __expf and __logf itself) */
#define __expf(x) expf(x)
#define __logf(x) logf(x)
static inline float __fdividef(float a, float b) { return a / b; }
/* IEEE float32 operations rounded to nearest, never fused (as nvcc's __fmul_rn / __fadd_rn). */
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static inline float __fdiv_rn(float a, float b) { volatile float r = a / b; return r; }
/* Four signed 8-bit products of the bytes of a and b, added to c (sm_61+'s dp4a.s32.s32). */
static inline int __dp4a(int a, int b, int c) {
  for (int k = 0; k < 4; k++) c += (int)(signed char)(a >> (8 * k)) * (int)(signed char)(b >> (8 * k));
  return c;
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }

/* CUDA math functions the C library lacks. erfinv: Giles' single-precision approximation as a
 * start, then Newton steps on erf (from libm) to double precision. */
static inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : y == -1.0 ? -INFINITY : NAN;
  if (y == 0.0) return y;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w; x = -0.00125372503 + x * w; x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w; x = -0.0076224613 + x * w; x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 3; i++) { /* Newton on erf(x) - y; d/dx erf = 2/sqrt(pi) exp(-x^2) */
    const double err = erf(x) - y;
    x -= err / (1.1283791670955126 * exp(-x * x));
  }
  return x;
}
static inline float erfinvf(float y) { return (float)erfinv((double)y); }

/* CUDA's host/device min and max overloads. */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline long max(long a, long b) { return a > b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
static inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

/* ---- launching ---- */
namespace kd_emu {
/* One launch: run_thread() runs the kernel body for the current GPU thread. */
struct kernel_task {
  virtual ~kernel_task() {}
  virtual void run_thread() = 0;
};
/* Validates the configuration (as the GPU would: cudaErrorInvalidConfiguration, ...) and
 * enqueues the grid on the stream, taking ownership of task; records the error for
 * cudaGetLastError. */
void submit(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const void *kernel, const char *name,
            kernel_task *task);
/* Enqueues fn on the stream as device work (the emulated body of a library kernel such as a CUB
 * sort): it runs on the stream's thread, in stream order, and counts as `launches` launches. */
cudaError_t enqueue(cudaStream_t stream, const char *name, int launches, std::function<void()> fn);
/* cudaFuncSetAttribute's effect: a kernel's opt-in to more dynamic shared memory. */
cudaError_t func_set_attribute(const void *kernel, int attr, int value);

/* The launch templates stay hidden: each library or extension instantiates its own. */
#pragma GCC visibility push(hidden)
template <typename... P>
struct launcher {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  void (*kernel)(P...);
  const char *name;
  /* The arguments convert to the kernel's parameter types here, as at a <<<...>>> launch. */
  void operator()(P... args) const {
    struct task final : kernel_task {
      void (*k)(P...);
      std::tuple<typename std::decay<P>::type...> a;
      task(void (*kk)(P...), P... v) : k(kk), a(v...) {}
      void run_thread() override { std::apply(k, a); }
    };
    submit(grid, block, smem, stream, (const void *)kernel, name, new task(kernel, args...));
  }
};
template <typename... P>
launcher<P...> launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char *name, void (*kernel)(P...)) {
  return launcher<P...>{grid, block, smem, stream, kernel, name};
}
}  // namespace kd_emu

template <typename... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), enum cudaFuncAttribute attr, int value) {
  return kd_emu::func_set_attribute((const void *)kernel, (int)attr, value);
}

#pragma GCC visibility pop

#pragma GCC visibility pop

#endif
