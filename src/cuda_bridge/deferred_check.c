/* deferred_check.c - the host side of deferred index errors (Note [Deferred index errors] in
 * cuda/deferred_check.cuh): per device, a kd_cuda_fault in pinned host memory and a ring of the
 * pending checks' messages, read at every sync point. */
#include "cuda_bridge/deferred_check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../cuda/kd_cuda_api.h"

#define KD_DEFERRED_MAX_DEVICES 64
/* Checks remembered per device. A fault's entry outlives this many later checks (it is kept
 * aside once the record holds it); beyond, the message falls back to the bad value alone. */
#define KD_DEFERRED_RING 4096

typedef struct kd_deferred_entry {
  int64_t seq;
  kd_cuda_check_fail_fn fail;
  int64_t args[3];
} kd_deferred_entry;

typedef struct kd_deferred_device {
  kd_cuda_fault *record; /* pinned host memory, the kernels' address too (unified addressing) */
  int64_t next_seq;
  kd_deferred_entry ring[KD_DEFERRED_RING];
  kd_deferred_entry held; /* the recorded fault's entry, kept when its ring slot is reused */
} kd_deferred_device;

static kd_deferred_device *kd_deferred[KD_DEFERRED_MAX_DEVICES];
static pthread_mutex_t kd_deferred_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t kd_deferred_recorded(const kd_cuda_fault *f) { return __atomic_load_n(&f->seq, __ATOMIC_ACQUIRE); }

bool kd_cuda_deferred_begin(const kd_cuda_api *api, int device, kd_cuda_check_fail_fn fail, const int64_t args[3],
                            int64_t *record, int64_t *seq) {
  if (device < 0 || device >= KD_DEFERRED_MAX_DEVICES || !fail) return false;
  pthread_mutex_lock(&kd_deferred_mu);
  kd_deferred_device *dd = kd_deferred[device];
  if (!dd) {
    void *p = NULL;
    dd = (kd_deferred_device *)calloc(1, sizeof *dd);
    if (dd && api->host_alloc(sizeof(kd_cuda_fault), &p) == KD_CUDA_OK && p) {
      memset(p, 0, sizeof(kd_cuda_fault));
      dd->record = (kd_cuda_fault *)p;
      __atomic_store_n(&kd_deferred[device], dd, __ATOMIC_RELEASE);
    } else {
      free(dd);
      dd = NULL;
    }
  }
  if (dd) {
    const int64_t s = ++dd->next_seq;
    kd_deferred_entry *e = &dd->ring[s % KD_DEFERRED_RING];
    if (e->seq && (uint64_t)e->seq == kd_deferred_recorded(dd->record)) dd->held = *e;
    e->seq = s;
    e->fail = fail;
    memcpy(e->args, args, sizeof e->args);
    *record = (int64_t)(intptr_t)dd->record;
    *seq = s;
  }
  pthread_mutex_unlock(&kd_deferred_mu);
  return dd != NULL;
}

kd_status kd_cuda_deferred_take(int device) {
  if (device < 0 || device >= KD_DEFERRED_MAX_DEVICES) return KD_OK;
  kd_deferred_device *dd = __atomic_load_n(&kd_deferred[device], __ATOMIC_ACQUIRE);
  if (!dd || !kd_deferred_recorded(dd->record)) return KD_OK; /* the common case: one load */
  pthread_mutex_lock(&kd_deferred_mu);
  kd_cuda_fault *f = dd->record;
  const int64_t s = (int64_t)kd_deferred_recorded(f);
  if (!s) { /* taken by another thread meanwhile */
    pthread_mutex_unlock(&kd_deferred_mu);
    return KD_OK;
  }
  const int64_t bad = f->value;
  kd_deferred_entry e = dd->ring[s % KD_DEFERRED_RING];
  if (e.seq != s) e = dd->held;
  f->value = 0;
  __atomic_store_n(&f->seq, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&f->claim, 0, __ATOMIC_RELEASE); /* later checks may record again */
  pthread_mutex_unlock(&kd_deferred_mu);
  if (e.seq == s) return e.fail(bad, e.args);
  return kd_error(KD_ERR_INDEX, "index %lld is out of range (found on the device by an earlier indexing op)",
                  (long long)bad);
}
