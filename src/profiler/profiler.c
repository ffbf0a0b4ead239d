/* profiler.c - recording of op, autograd-node and user-range events for kd.profiler. See
 * profiler.h. Events go to a growable array of the thread's session; a failed allocation drops
 * the event (counted in `dropped`), never the op. */
#include "profiler/profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int kd_profiler_enabled;
static _Thread_local kd_prof_session *kd_prof_tls;
static _Thread_local int32_t kd_prof_serial; /* range ids carry their profile's serial */

static int64_t kd_prof_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

kd_status kd_profiler_start(bool record_shapes, bool cuda, bool with_stack) {
  if (kd_prof_tls) return kd_error(KD_ERR_INVALID_ARGUMENT, "Profiler is already enabled on this thread");
  kd_prof_session *s = (kd_prof_session *)calloc(1, sizeof *s);
  if (!s) return kd_error(KD_ERR_OOM, "out of memory starting the profiler");
  s->record_shapes = record_shapes;
  s->cuda = cuda;
  s->with_stack = with_stack;
  s->serial = ++kd_prof_serial;
  s->t0_ns = kd_prof_now_ns();
  kd_prof_tls = s;
  __atomic_add_fetch(&kd_profiler_enabled, 1, __ATOMIC_RELAXED);
  if (cuda) kd_profiler_cuda_observe(true);
  return KD_OK;
}

bool kd_profiler_active(void) { return kd_prof_tls != NULL; }

bool kd_profiler_wants_stack(void) {
  const kd_prof_session *s = kd_prof_tls;
  return s && s->with_stack && s->depth == 0;
}

void kd_profiler_set_stack(char *stack) {
  kd_prof_session *s = kd_prof_tls;
  if (!s) {
    free(stack);
    return;
  }
  free(s->pending_stack);
  s->pending_stack = stack;
}
kd_prof_session *kd_profiler_session(void) { return kd_prof_tls; }
int64_t kd_profiler_now(const kd_prof_session *s) { return kd_prof_now_ns() - s->t0_ns; }

kd_prof_session *kd_profiler_stop(void) {
  kd_prof_session *s = kd_prof_tls;
  if (!s) return NULL;
  kd_prof_tls = NULL;
  if (__atomic_sub_fetch(&kd_profiler_enabled, 1, __ATOMIC_RELAXED) == 0) kd_profiler_cuda_observe(false);
  int64_t now = kd_prof_now_ns() - s->t0_ns;
  for (int64_t i = 0; i < s->n; i++)
    if (s->events[i].open) {
      s->events[i].end_ns = now;
      s->events[i].open = false;
    }
  s->depth = 0;
  if (s->n_marks) kd_profiler_cuda_finish(s);
  return s;
}

void kd_profiler_session_free(kd_prof_session *s) {
  if (!s) return;
  kd_profiler_cuda_free(s);
  free(s->pending_stack);
  for (int64_t i = 0; i < s->n; i++) {
    free(s->events[i].stack);
    free(s->events[i].owned_name);
    free(s->events[i].shapes);
  }
  free(s->events);
  free(s->stack);
  free(s);
}

/* Appends an open event under the innermost open one; -1 if memory ran out. */
static int64_t kd_prof_push(kd_prof_session *s, kd_prof_kind kind, const char *name, char *owned_name) {
  if (s->n == s->cap || s->depth == s->stack_cap) {
    int64_t cap = s->n == s->cap ? (s->cap ? s->cap * 2 : 1024) : s->cap;
    int32_t scap = s->depth == s->stack_cap ? (s->stack_cap ? s->stack_cap * 2 : 64) : s->stack_cap;
    kd_prof_event *ev = cap == s->cap ? s->events : (kd_prof_event *)realloc(s->events, (size_t)cap * sizeof *ev);
    if (ev) s->events = ev, s->cap = cap;
    int32_t *st = scap == s->stack_cap ? s->stack : (int32_t *)realloc(s->stack, (size_t)scap * sizeof *st);
    if (st) s->stack = st, s->stack_cap = scap;
    if (!ev || !st || s->n >= INT32_MAX) {
      s->dropped++;
      free(owned_name);
      return -1;
    }
  }
  kd_prof_event *e = &s->events[s->n];
  e->name = owned_name ? owned_name : name;
  e->owned_name = owned_name;
  e->shapes = NULL;
  e->stack = NULL;
  e->parent = s->depth ? s->stack[s->depth - 1] : -1;
  e->kind = (uint8_t)kind;
  e->open = true;
  e->cuda_start = e->cuda_end = -1;
  e->cuda_ns = -1;
  s->stack[s->depth++] = (int32_t)s->n;
  e->start_ns = kd_prof_now_ns() - s->t0_ns;
  e->end_ns = e->start_ns;
  return s->n++;
}

/* Closes event id and takes it off the open stack (ranges of async code may close out of order). */
static void kd_prof_pop(kd_prof_session *s, int64_t id) {
  if (id < 0 || id >= s->n || !s->events[id].open) return;
  s->events[id].end_ns = kd_prof_now_ns() - s->t0_ns;
  s->events[id].open = false;
  for (int32_t i = s->depth - 1; i >= 0; i--)
    if (s->stack[i] == id) {
      memmove(&s->stack[i], &s->stack[i + 1], (size_t)(s->depth - 1 - i) * sizeof *s->stack);
      s->depth--;
      break;
    }
}

/* PyTorch's "Input Shapes" text: a tensor's sizes, [] for anything else. */
static char *kd_prof_shapes(const kd_op_info *op, const kd_value *args) {
  size_t cap = 256, len = 0;
  char *buf = (char *)malloc(cap);
  if (!buf) return NULL;
  buf[len++] = '[';
  for (int i = 0; i < op->nargs; i++) {
    char one[KD_MAX_DIMS * 22 + 8];
    int n = 0;
    n += snprintf(one + n, sizeof one - (size_t)n, "%s[", i ? ", " : "");
    if (args[i].kind == KD_VALUE_TENSOR && args[i].v.t) {
      const kd_tensor *t = args[i].v.t;
      for (int d = 0; d < t->ndim; d++) n += snprintf(one + n, sizeof one - (size_t)n, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
    }
    n += snprintf(one + n, sizeof one - (size_t)n, "]");
    if (len + (size_t)n + 2 > cap) {
      char *b = (char *)realloc(buf, cap = cap * 2 + (size_t)n);
      if (!b) { free(buf); return NULL; }
      buf = b;
    }
    memcpy(buf + len, one, (size_t)n);
    len += (size_t)n;
  }
  buf[len++] = ']';
  buf[len] = 0;
  return buf;
}

/* The CUDA device an op runs on: its first CUDA tensor or device argument; -1 for none. */
static int kd_prof_cuda_device(const kd_op_info *op, const kd_value *args) {
  for (int i = 0; i < op->nargs; i++) {
    const kd_value *a = &args[i];
    if (a->kind == KD_VALUE_TENSOR && a->v.t && kd_tensor_device(a->v.t).type == KD_DEVICE_CUDA)
      return kd_tensor_device(a->v.t).index;
    if (a->kind == KD_VALUE_DEVICE && a->v.device.type == KD_DEVICE_CUDA) return a->v.device.index;
    if (a->kind == KD_VALUE_TENSORLIST)
      for (int j = 0; j < a->v.tlist.n; j++)
        if (a->v.tlist.data[j] && kd_tensor_device(a->v.tlist.data[j]).type == KD_DEVICE_CUDA)
          return kd_tensor_device(a->v.tlist.data[j]).index;
  }
  return -1;
}

kd_status kd_profiler_call(const kd_op_info *op, kd_value *args, kd_value *outs, kd_profiler_call_fn body) {
  kd_prof_session *s = kd_prof_tls;
  if (!s) return body(op, args, outs);
  /* shapes and the start mark first, so that they are not timed as the op's CPU time */
  char *shapes = s->record_shapes ? kd_prof_shapes(op, args) : NULL;
  int dev = s->cuda ? kd_prof_cuda_device(op, args) : -1;
  int32_t cuda_start = dev >= 0 ? kd_profiler_cuda_mark(s, dev) : -1;
  int64_t id = kd_prof_push(s, KD_PROF_OP, op->name, NULL);
  char *stack = s->pending_stack;
  s->pending_stack = NULL;
  if (id >= 0) {
    s->events[id].shapes = shapes;
    s->events[id].stack = stack;
  } else {
    free(shapes);
    free(stack);
  }
  kd_status st = body(op, args, outs);
  if (kd_prof_tls != s) return st; /* the op may not stop the profile, but be safe */
  kd_prof_pop(s, id);
  if (id >= 0 && cuda_start >= 0) {
    kd_prof_event *e = &s->events[id]; /* the body may have grown the array */
    e->cuda_start = cuda_start;
    e->cuda_end = kd_profiler_cuda_mark(s, dev);
  }
  return st;
}

int64_t kd_profiler_begin(kd_prof_kind kind, const char *prefix, const char *name) {
  kd_prof_session *s = kd_prof_tls;
  if (!s) return -1;
  size_t lp = strlen(prefix), ln = strlen(name);
  char *copy = (char *)malloc(lp + ln + 1);
  if (!copy) {
    s->dropped++;
    return -1;
  }
  memcpy(copy, prefix, lp);
  memcpy(copy + lp, name, ln + 1);
  int64_t i = kd_prof_push(s, kind, NULL, copy);
  return i < 0 ? -1 : ((int64_t)s->serial << 32) | i;
}

void kd_profiler_end(int64_t id) {
  kd_prof_session *s = kd_prof_tls;
  /* a range of an earlier profile (async code may end it after that profile stopped) is ignored */
  if (id >= 0 && s && (int32_t)(id >> 32) == s->serial) kd_prof_pop(s, id & 0xffffffff);
}
