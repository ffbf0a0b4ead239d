/* profiler.h - the op profiler behind kd.profiler (lib/profiler.js). While a profile is active
 * on a thread, every kd_call on that thread, every autograd node the engine runs there and every
 * user range (kd.profiler.recordFunction) becomes an event: a name, start and end (monotonic
 * nanoseconds from the profile's start), the parent (the innermost event open when it began) and,
 * when asked for, the input shapes in PyTorch's text form ("[[2, 3], [3], []]"). With CUDA
 * activity, an op on a CUDA device also gets its CUDA time (timing events recorded on the current
 * stream before and after it) and the kernels it launched (reported by the CUDA library's launch
 * observer, each timed from an event recorded just before it to the stream's next event), all
 * read when the profile stops (profiler_cuda.c).
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
  char *stack;       /* with_stack: the JS stack of an op called from JS, else NULL */
  int64_t start_ns, end_ns;
  int32_t parent;    /* index of the enclosing event, -1 at the top */
  uint8_t kind;      /* kd_prof_kind */
  bool open;
  int32_t cuda_start, cuda_end; /* marks around a CUDA op, -1 for none */
  double cuda_ns;           /* GPU time between them, -1 when not measured */
} kd_prof_event;

/* A timing event recorded on a stream (owned by the session until the profile stops). */
typedef struct kd_prof_mark {
  void *event;
  int16_t device;
  uintptr_t stream;
  int64_t cpu_ns;    /* when it was recorded, on the profile's clock */
} kd_prof_mark;

/* A kernel launched inside an op: its mark, and after the stop its time on the GPU. */
typedef struct kd_prof_kernel {
  const char *name;  /* as written at the launch (static storage of the CUDA library) */
  int32_t event;     /* the op (innermost open event) that launched it */
  int32_t mark;
  int16_t device;
  uintptr_t stream;
  double start_ns, dur_ns; /* start on the profile's clock (aligned at the device's first mark); -1 unknown */
} kd_prof_kernel;

typedef struct kd_prof_session {
  kd_prof_event *events;
  int64_t n, cap;
  int32_t *stack;     /* open events, innermost last */
  int32_t depth, stack_cap;
  int64_t t0_ns;      /* CLOCK_MONOTONIC at start */
  int32_t serial;     /* which profile of this thread (range ids carry it) */
  bool record_shapes;
  bool with_stack;    /* ops called from JS get the caller's JS stack */
  char *pending_stack;/* the stack for the next op event (kd_profiler_set_stack) */
  bool cuda;          /* time CUDA ops and their kernels with events */
  kd_prof_mark *marks;
  int32_t n_marks, cap_marks;
  kd_prof_kernel *kernels;
  int32_t n_kernels, cap_kernels;
  int64_t dropped;    /* events lost to a failed allocation (the op itself still ran) */
} kd_prof_session;

/* Number of threads with an active profile: kd_call's only check when profiling is off (read
 * with a relaxed atomic load, a plain load on x86-64 and arm64). */
extern int kd_profiler_enabled;

/* Starts a profile on this thread (an error if one is already active here). */
kd_status kd_profiler_start(bool record_shapes, bool cuda, bool with_stack);
/* Whether the next op would be a top-level op of a profile that records stacks. */
bool kd_profiler_wants_stack(void);
/* Hands over (malloc'ed) the JS stack of the op about to be called; the next op event takes it. */
void kd_profiler_set_stack(char *stack);
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

/* This thread's active profile, NULL if none. */
kd_prof_session *kd_profiler_session(void);
/* The current time on s's clock. */
int64_t kd_profiler_now(const kd_prof_session *s);

/* profiler_cuda.c: a mark on the current stream of a CUDA device (its index, -1 on failure);
 * turning the launch observer on/off (off once no thread profiles); at stop, waiting for each
 * stream's last mark and computing op and kernel times; freeing the marks. */
int32_t kd_profiler_cuda_mark(kd_prof_session *s, int device);
void kd_profiler_cuda_observe(bool on);
void kd_profiler_cuda_finish(kd_prof_session *s);
void kd_profiler_cuda_free(kd_prof_session *s);

#ifdef __cplusplus
}
#endif

#endif
