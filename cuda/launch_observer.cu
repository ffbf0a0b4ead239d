/* launch_observer.cu - the profiler's view of kernel launches: KD_LAUNCH calls kd_cu_note_launch
 * just before each launch, which passes the kernel's name, the current device and the stream to
 * the observer kindling.node set (set_launch_observer in kd_cuda_api.h), if any. With none set,
 * a launch pays one load and a not-taken branch. */
#include "kd_cuda_internal.h"

typedef void (*kd_cu_launch_observer)(void *user, const char *kernel, int device, uintptr_t stream);

static kd_cu_launch_observer kd_cu_observer;
static void *kd_cu_observer_user;

void kd_cu_set_launch_observer(kd_cu_launch_observer fn, void *user) {
  kd_cu_observer_user = user;
  __atomic_store_n(&kd_cu_observer, fn, __ATOMIC_RELEASE);
}

void kd_cu_note_launch(const char *kernel, cudaStream_t stream) {
  kd_cu_launch_observer fn = __atomic_load_n(&kd_cu_observer, __ATOMIC_ACQUIRE);
  if (__builtin_expect(fn == nullptr, 1)) return;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return;
  fn(kd_cu_observer_user, kernel, device, (uintptr_t)stream);
}
