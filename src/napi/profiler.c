/* profiler.c (napi) - src/profiler/ for lib/profiler.js (binding.profiler.*): start and stop
 * this thread's profile, and user ranges. stop() hands the raw events to JS, which computes
 * self times, key averages, the table and the Chrome trace. */
#include <stdlib.h>

#include "napi/napi_util.h"
#include "profiler/profiler.h"


/* A user range's name is kept whole (the events copy it); past this it is refused, not cut. */
#define KD_PROF_MAX_NAME ((size_t)1 << 16)

static const char *const kd_prof_kind_names[] = {[KD_PROF_OP] = "op", [KD_PROF_BACKWARD] = "backward", [KD_PROF_USER] = "user"};

/* With withStack, before an op called from JS: the JS stack there (an Error's .stack, which
 * Node-API can read), handed to the profiler for the op's event. Failures leave no stack. */
void kd_napi_profiler_note_stack(napi_env env) {
  if (!kd_profiler_wants_stack()) return;
  napi_value msg, err, stack;
  size_t len = 0;
  if (napi_create_string_utf8(env, "", 0, &msg) != napi_ok || napi_create_error(env, NULL, msg, &err) != napi_ok ||
      napi_get_named_property(env, err, "stack", &stack) != napi_ok ||
      napi_get_value_string_utf8(env, stack, NULL, 0, &len) != napi_ok)
    return;
  char *text = (char *)malloc(len + 1);
  if (text && napi_get_value_string_utf8(env, stack, text, len + 1, &len) == napi_ok) kd_profiler_set_stack(text);
  else free(text);
}

/* A profile still running when the environment shuts down is dropped with it. */
static void kd_prof_env_cleanup(void *arg) {
  (void)arg;
  kd_profiler_session_free(kd_profiler_stop());
}

/* start(recordShapes, cuda, withStack) */
static napi_value kd_prof_start(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = 3;
  bool shapes = false, cuda = false, stack = false;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc >= 1) KD_NAPI_CALL(env, napi_get_value_bool(env, argv[0], &shapes));
  if (argc >= 2) KD_NAPI_CALL(env, napi_get_value_bool(env, argv[1], &cuda));
  if (argc >= 3) KD_NAPI_CALL(env, napi_get_value_bool(env, argv[2], &stack));
  kd_status st = kd_profiler_start(shapes, cuda, stack);
  if (st != KD_OK) return kd_napi_throw(env, st);
  KD_NAPI_CALL(env, napi_add_env_cleanup_hook(env, kd_prof_env_cleanup, NULL));
  return NULL;
}

static napi_status kd_prof_set_num(napi_env env, napi_value o, const char *k, double v) {
  napi_value x;
  napi_status st = napi_create_double(env, v, &x);
  return st == napi_ok ? napi_set_named_property(env, o, k, x) : st;
}

static napi_status kd_prof_set_str(napi_env env, napi_value o, const char *k, const char *v) {
  napi_value x;
  napi_status st = v ? napi_create_string_utf8(env, v, NAPI_AUTO_LENGTH, &x) : napi_get_null(env, &x);
  return st == napi_ok ? napi_set_named_property(env, o, k, x) : st;
}

static napi_status kd_prof_events_to_js(napi_env env, const kd_prof_session *s, napi_value *out) {
  napi_value r, list;
  napi_status st = napi_create_object(env, &r);
  if (st == napi_ok) st = napi_create_array_with_length(env, (size_t)s->n, &list);
  for (int64_t i = 0; st == napi_ok && i < s->n; i++) {
    const kd_prof_event *e = &s->events[i];
    napi_value o;
    st = napi_create_object(env, &o);
    if (st == napi_ok) st = kd_prof_set_str(env, o, "name", e->name);
    if (st == napi_ok) st = kd_prof_set_str(env, o, "kind", kd_prof_kind_names[e->kind]);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "startNs", (double)e->start_ns);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "endNs", (double)e->end_ns);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "parent", e->parent);
    if (st == napi_ok) st = kd_prof_set_str(env, o, "shapes", e->shapes);
    if (st == napi_ok) st = kd_prof_set_str(env, o, "stack", e->stack);
    if (st == napi_ok && e->cuda_ns >= 0) st = kd_prof_set_num(env, o, "cudaNs", e->cuda_ns);
    if (st == napi_ok) st = napi_set_element(env, list, (uint32_t)i, o);
  }
  if (st == napi_ok) st = napi_set_named_property(env, r, "events", list);
  napi_value kernels;
  if (st == napi_ok) st = napi_create_array_with_length(env, (size_t)s->n_kernels, &kernels);
  for (int32_t i = 0; st == napi_ok && i < s->n_kernels; i++) {
    const kd_prof_kernel *k = &s->kernels[i];
    napi_value o;
    st = napi_create_object(env, &o);
    if (st == napi_ok) st = kd_prof_set_str(env, o, "name", k->name);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "event", k->event);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "device", k->device);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "stream", (double)k->stream);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "startNs", k->start_ns);
    if (st == napi_ok) st = kd_prof_set_num(env, o, "durNs", k->dur_ns);
    if (st == napi_ok) st = napi_set_element(env, kernels, (uint32_t)i, o);
  }
  if (st == napi_ok) st = napi_set_named_property(env, r, "kernels", kernels);
  if (st == napi_ok) st = kd_prof_set_num(env, r, "dropped", (double)s->dropped);
  *out = r;
  return st;
}

/* stop() -> { events: [{ name, kind, startNs, endNs, parent, shapes, stack, cudaNs? }],
 *             kernels: [{ name, event, device, stream, startNs, durNs }], dropped } | null */
static napi_value kd_prof_stop(napi_env env, napi_callback_info info) {
  (void)info;
  kd_prof_session *s = kd_profiler_stop();
  napi_value r;
  if (!s) {
    napi_get_null(env, &r);
    return r;
  }
  napi_remove_env_cleanup_hook(env, kd_prof_env_cleanup, NULL);
  napi_status st = kd_prof_events_to_js(env, s, &r);
  kd_profiler_session_free(s);
  KD_NAPI_CALL(env, st);
  return r;
}

/* active() -> whether this thread is profiling */
static napi_value kd_prof_is_active(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r;
  napi_get_boolean(env, kd_profiler_active(), &r);
  return r;
}

/* begin(name) -> range id (-1 when not profiling) */
static napi_value kd_prof_begin(napi_env env, napi_callback_info info) {
  napi_value argv[1], r;
  size_t argc = 1;
  char *name = NULL;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) return kd_napi_throw_msg(env, KD_ERR_TYPE, "recordFunction: a name is required");
  kd_status st = kd_napi_string_dup(env, argv[0], "recordFunction: the name", KD_PROF_MAX_NAME, &name);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_status ns = napi_create_int64(env, kd_profiler_begin(KD_PROF_USER, "", name), &r);
  free(name);
  KD_NAPI_CALL(env, ns);
  return r;
}

/* end(id) */
static napi_value kd_prof_end(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  int64_t id = -1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc >= 1) KD_NAPI_CALL(env, napi_get_value_int64(env, argv[0], &id));
  kd_profiler_end(id);
  return NULL;
}

napi_status kd_napi_register_profiler(napi_env env, napi_value exports) {
  napi_value o;
  napi_status st = napi_create_object(env, &o);
  static const struct { const char *name; napi_callback cb; } fns[] = {
      {"start", kd_prof_start}, {"stop", kd_prof_stop}, {"active", kd_prof_is_active},
      {"begin", kd_prof_begin}, {"end", kd_prof_end},
  };
  for (size_t i = 0; st == napi_ok && i < sizeof fns / sizeof fns[0]; i++) st = kd_napi_set_fn(env, o, fns[i].name, fns[i].cb, NULL);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "profiler", o);
  return st;
}
