/* cuda_async.h - Promises that wait for the GPU (see Note [CUDA async completion] in
 * cuda_async.c): a kd_cuda_job per Promise, settled on the main thread when the GPU reaches it,
 * or rejected when its device faults first. Used by the async functions of napi/cuda.c. */
#ifndef KD_NAPI_CUDA_ASYNC_H
#define KD_NAPI_CUDA_ASYNC_H

#include <stddef.h>

#include "core/tensor.h"
#include "napi/napi_util.h"

typedef struct kd_cuda_async kd_cuda_async; /* one per environment */

typedef struct kd_cuda_job {
  kd_cuda_async *ctx;
  napi_deferred deferred;
  int device;
  kd_tensor *keep; /* released on completion */
  void *pinned;    /* pinned host buffer (data jobs), given back on completion */
  size_t nbytes;
  int want_buffer;
  int state;                       /* KD_JOB_* (atomic) */
  struct kd_cuda_job *prev, *next; /* the environment's list of jobs in flight (under its mutex) */
} kd_cuda_job;

/* The host function to enqueue behind a job's work (cudaLaunchHostFunc): runs on a CUDA thread. */
void kd_cuda_job_fire(void *user);

/* A new job with its Promise in *promise; NULL with an exception pending on failure. */
kd_cuda_job *kd_cuda_job_new(napi_env env, kd_cuda_async *ctx, int device, napi_value *promise);

/* The job's host function is enqueued: it is now in flight (and watched for device faults). */
void kd_cuda_job_started(napi_env env, kd_cuda_job *j);

/* The job could not be enqueued: rejects its Promise with st, frees it, returns the Promise. */
napi_value kd_cuda_job_fail(napi_env env, kd_cuda_job *j, kd_status st, napi_value promise);

/* Makes this environment's context (the threadsafe function, the fault watcher); NULL on failure. */
kd_cuda_async *kd_cuda_async_create(napi_env env);

#endif
