/* profiler.h - the op profiler behind kd.profiler (lib/profiler.js). While a profile is active
 * on a thread, every kd_call on that thread, every autograd node the engine runs there and every
 * user range (kd.profiler.recordFunction) becomes an event: a name, start and end (monotonic
 * nanoseconds from the profile's start), the parent (the innermost event open when it began) and,
 * when asked for, the input shapes in PyTorch's text form ("[[2, 3], [3], []]"). With CUDA
 * activity, an op on a CUDA device also gets its CUDA time: timing events recorded on the current
 * stream before and after it, read when the profile stops (profiler_cuda.c).
 * With no profile anywhere, kd_call pays one predictable branch on kd_profiler_enabled.
 * Profiles are per thread (each worker_thread profiles its own ops); one at a time per thread. */
#ifndef KD_PROFILER_H
#define KD_PROFILER_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_prof_kind {
  KD_PROF_OP,       /* an op through kd_call: name is kd_op_info.name ("add", "mylib::scale") */
  KD_PROF_BACKWARD, /* an autograd node run by the engine: "autograd::engine::evaluate_function: AddBackward0" */
  KD_PROF_USER,     /* a user range: kd.profiler.recordFunction(name, fn) */
} kd_prof_kind;

typedef struct kd_prof_event {
  const char *name;  /* static (an op's name) or owned_name */
  char *owned_name;
  char *shapes;      /* input shapes text, NULL when shapes are not recorded */
  int64_t start_ns, end_ns;
  int32_t parent;    /* index of the enclosing event, -1 at the top */
  uint8_t kind;      /* kd_prof_kind */
  bool open;
  int16_t cuda_device;      /* the op's CUDA device, -1 for none */
  void *cuda_start, *cuda_end; /* timing events (owned until the profile stops) */
  double cuda_ns;           /* GPU time between them, -1 when not measured */
} kd_prof_event;

#define KD_PROF_MAX_DEVICES 16

typedef struct kd_prof_session {
  kd_prof_event *events;
  int64_t n, cap;
  int32_t *stack;     /* open events, innermost last */
  int32_t depth, stack_cap;
  int64_t t0_ns;      /* CLOCK_MONOTONIC at start */
  int32_t serial;     /* which profile of this thread (range ids carry it) */
  bool record_shapes;
  bool cuda;          /* time CUDA ops with events */
  void *cuda_last[KD_PROF_MAX_DEVICES]; /* each device's last mark: waited on at stop */
  int64_t dropped;    /* events lost to a failed allocation (the op itself still ran) */
} kd_prof_session;

/* Number of threads with an active profile: kd_call's only check when profiling is off. */
extern int kd_profiler_enabled;

/* Starts a profile on this thread (an error if one is already active here). */
kd_status kd_profiler_start(bool record_shapes, bool cuda);
/* Whether this thread has an active profile. */
bool kd_profiler_active(void);
/* Ends this thread's profile and hands its events over (open ranges end now); NULL if none.
 * Free the result with kd_profiler_session_free. */
kd_prof_session *kd_profiler_stop(void);
void kd_profiler_session_free(kd_prof_session *s);

/* The body of kd_call (the keyset walk), run inside an op event by kd_profiler_call. */
typedef kd_status (*kd_profiler_call_fn)(const kd_op_info *op, kd_value *args, kd_value *outs);
kd_status kd_profiler_call(const kd_op_info *op, kd_value *args, kd_value *outs, kd_profiler_call_fn body);

/* Opens a range event named prefix+name (copied); returns its id, or -1 when this thread is
 * not profiling. kd_profiler_end(-1) does nothing, so callers need no check of their own. */
int64_t kd_profiler_begin(kd_prof_kind kind, const char *prefix, const char *name);
void kd_profiler_end(int64_t id);

/* profiler_cuda.c: a timing event on the current stream of a CUDA device (NULL on failure),
 * waiting for one, the GPU nanoseconds between two (-1 on failure), and releasing one. */
void *kd_profiler_cuda_mark(int device);
bool kd_profiler_cuda_wait(void *mark);
double kd_profiler_cuda_elapsed_ns(void *start, void *end);
void kd_profiler_cuda_release(void *mark);

#ifdef __cplusplus
}
#endif

#endif
