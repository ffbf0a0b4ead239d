/* ops.c - THE generic op entry. Every op of the op list is exported as `binding.ops[name]`,
 * a function whose callback data is the op's kd_op_info: arguments are unboxed by the op's
 * schema into kd_values, the call goes through the dispatcher (kd_call), and outputs are
 * boxed back into tensor handles. Nothing here knows any particular op.
 *
 * Note [Arguments are held for the call]
 * Unboxing can run JS: reading an element of an array argument may call a getter (or a Proxy
 * trap), and that code may dispose a tensor argument already unboxed; so can the JS kernel of a
 * runtime op (kd.library) while the call runs. A tensor disposed mid-call must stay alive until
 * the op is done with it, as a Python object dropped during a PyTorch call would. Each call
 * records the tensors it unwrapped in a frame (kd_napi_call_frame, napi_util.h), linked from the
 * environment for as long as the call runs; no reference is taken, since taking and dropping one
 * per argument was two atomic updates per tensor on every op. Instead, dispose() and the GC
 * sweep hand the reference they drop to the outermost frame still using that tensor
 * (kd_napi_frames_take), which releases it when its call returns. So a tensor is never freed
 * under a running call, and a temporary that a JS kernel makes and disposes is freed at once.
 * (lib/args.js also reads each argument once, before any of this runs, so the common path calls
 * no JS here at all.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "napi/napi_util.h"
#include "profiler/profiler.h"

void kd_napi_profiler_note_stack(napi_env env); /* napi/profiler.c */

#define KD_NAPI_MAX_ARGS 12
#define KD_NAPI_INLINE_INTS 64

/* Storage for what unboxed arguments point to; freed after the call. */
typedef struct kd_unbox_scratch {
  int64_t ints[KD_NAPI_INLINE_INTS];
  int nints;
  char strings[KD_NAPI_MAX_ARGS][64];
  void *heap[KD_NAPI_MAX_ARGS];
  int nheap;
  uintptr_t held_inline[KD_NAPI_MAX_ARGS]; /* the call frame's first entries */
  kd_napi_call_frame frame;                /* the tensors the call uses (Note above) */
  kd_napi_env *env;
} kd_unbox_scratch;

/* Links the call's frame into the environment (all of the call's returns go through
 * kd_scratch_free). */
static void kd_scratch_init(kd_unbox_scratch *s, kd_napi_env *e) {
  s->nints = 0;
  s->nheap = 0;
  s->frame.entries = s->held_inline;
  s->frame.n = 0;
  s->frame.cap = KD_NAPI_MAX_ARGS;
  s->env = e;
  s->frame.outer = e ? e->frames : NULL;
  if (e) e->frames = &s->frame;
}

static void kd_scratch_free(kd_unbox_scratch *s) {
  for (int i = 0; i < s->nheap; i++) free(s->heap[i]);
  if (s->env) s->env->frames = s->frame.outer;
  kd_napi_call_frame_end(&s->frame);
  if (s->frame.entries != s->held_inline) free(s->frame.entries);
}

/* Records an argument's tensor in the call's frame (See Note [Arguments are held for the
 * call]). Without an environment (never on a live handle) the tensor is retained instead. */
static kd_status kd_hold_tensor(kd_unbox_scratch *s, kd_tensor *t) {
  kd_napi_call_frame *f = &s->frame;
  if (f->n == f->cap) {
    int cap = f->cap * 2;
    uintptr_t *bigger = (uintptr_t *)malloc(sizeof(uintptr_t) * (size_t)cap);
    if (!bigger) return kd_error(KD_ERR_OOM, "out of memory");
    memcpy(bigger, f->entries, sizeof(uintptr_t) * (size_t)f->n);
    if (f->entries != s->held_inline) free(f->entries);
    f->entries = bigger;
    f->cap = cap;
  }
  uintptr_t entry = (uintptr_t)t;
  if (!s->env) {
    kd_tensor_retain(t);
    entry |= KD_NAPI_FRAME_OWNED;
  }
  f->entries[f->n++] = entry;
  return KD_OK;
}

/* Unwraps a tensor handle and holds its tensor for the call. */
static kd_status kd_unbox_tensor(napi_env env, napi_value v, const char *name, kd_unbox_scratch *s, kd_tensor **out) {
  KD_TRY(kd_napi_unwrap_tensor(env, v, name, out));
  return kd_hold_tensor(s, *out);
}

static kd_status kd_unbox_int(napi_env env, napi_value v, const char *name, int64_t *out) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  if (t == napi_bigint) {
    bool lossless;
    napi_get_value_bigint_int64(env, v, out, &lossless);
    if (!lossless) return kd_error(KD_ERR_TYPE, "argument '%s' is out of the int64 range", name);
    return KD_OK;
  }
  if (t != napi_number) return kd_error(KD_ERR_TYPE, "argument '%s' must be an integer", name);
  double d;
  napi_get_value_double(env, v, &d);
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
    return kd_error(KD_ERR_TYPE, "argument '%s' must be an integer, got %g", name, d);
  *out = (int64_t)d;
  return KD_OK;
}

static kd_status kd_unbox_scalar(napi_env env, napi_value v, napi_valuetype t, const char *name, kd_scalar *out) {
  if (t == napi_boolean) {
    bool b;
    napi_get_value_bool(env, v, &b);
    *out = kd_scalar_b(b);
    return KD_OK;
  }
  if (t == napi_bigint) {
    int64_t i;
    KD_TRY(kd_unbox_int(env, v, name, &i));
    *out = kd_scalar_i(i);
    return KD_OK;
  }
  if (t != napi_number) return kd_error(KD_ERR_TYPE, "argument '%s' must be a number or a boolean", name);
  double d;
  napi_get_value_double(env, v, &d);
  /* Note [JS numbers as scalars]: an integer-valued number is an int scalar (so
   * int32_tensor.add(2) stays int32), anything else a float scalar, as PyTorch treats 2 vs 2.5. */
  if (isfinite(d) && d == floor(d) && fabs(d) <= 9007199254740992.0) *out = kd_scalar_i((int64_t)d);
  else *out = kd_scalar_f(d);
  return KD_OK;
}

/* Note [JS lengths in C]
 * A JS array length is a uint32 chosen by the caller (an array-like may say 2^32 - 1 while
 * holding nothing). It is compared and summed as size_t, never as int, and a list longer than
 * KD_NAPI_MAX_LIST elements (napi_util.h) is refused before anything is allocated or read. */

static kd_status kd_unbox_list_length(napi_env env, napi_value v, const char *name, uint32_t *n) {
  *n = 0;
  if (napi_get_array_length(env, v, n) != napi_ok) return kd_error(KD_ERR_TYPE, "argument '%s' must be an array", name);
  if (*n > KD_NAPI_MAX_LIST)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "argument '%s' is too long (%u elements, at most %u)", name, *n, KD_NAPI_MAX_LIST);
  return KD_OK;
}

/* A heap buffer of n elements of `size` bytes, freed with the scratch after the call. */
static kd_status kd_scratch_alloc(kd_unbox_scratch *s, const char *name, uint32_t n, size_t size, void **out) {
  if (s->nheap >= KD_NAPI_MAX_ARGS) return kd_error(KD_ERR_INVALID_ARGUMENT, "too many list arguments (at '%s')", name);
  void *buf = malloc(size * (n ? (size_t)n : 1));
  if (!buf) return kd_error(KD_ERR_OOM, "out of memory");
  s->heap[s->nheap++] = buf;
  *out = buf;
  return KD_OK;
}

/* Element i of a list argument. Reading it may run JS (a getter, a Proxy trap) that throws: the
 * exception stays pending and the op's entry lets it propagate; nothing reads the element. */
static kd_status kd_list_element(napi_env env, napi_value v, uint32_t i, const char *name, napi_value *e) {
  if (napi_get_element(env, v, i, e) != napi_ok) return kd_error(KD_ERR_INVALID_ARGUMENT, "reading element %u of argument '%s' failed", i, name);
  return KD_OK;
}

static kd_status kd_unbox_intlist(napi_env env, napi_value v, const char *name, kd_unbox_scratch *s, kd_value *out) {
  bool is_array = false;
  napi_is_array(env, v, &is_array);
  if (!is_array) {
    int64_t i;
    kd_status st = kd_unbox_int(env, v, name, &i);
    if (st != KD_OK) return kd_error(KD_ERR_TYPE, "argument '%s' must be an array of integers", name);
    if (s->nints >= KD_NAPI_INLINE_INTS) return kd_error(KD_ERR_INVALID_ARGUMENT, "too many integer arguments");
    s->ints[s->nints] = i;
    *out = kd_value_intlist(&s->ints[s->nints++], 1);
    return KD_OK;
  }
  uint32_t n;
  KD_TRY(kd_unbox_list_length(env, v, name, &n));
  int64_t *buf = NULL;
  if ((size_t)s->nints + (size_t)n <= KD_NAPI_INLINE_INTS) { /* See Note [JS lengths in C] */
    buf = &s->ints[s->nints];
    s->nints += (int)n;
  } else {
    KD_TRY(kd_scratch_alloc(s, name, n, sizeof(int64_t), (void **)&buf));
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value e;
    KD_TRY(kd_list_element(env, v, i, name, &e));
    kd_status st = kd_unbox_int(env, e, name, &buf[i]);
    if (st != KD_OK) return kd_error(KD_ERR_TYPE, "argument '%s' must be an array of integers (element %u is not)", name, i);
  }
  *out = kd_value_intlist(buf, (int)n);
  return KD_OK;
}

/* Note [JS strings in C]
 * A JS string may hold NUL characters and be of any length; a C string ends at its first NUL and
 * a fixed buffer holds so many bytes. Neither may cut a string short silently: a string that does
 * not fit is refused, one holding a NUL too. */
static kd_status kd_unbox_string(napi_env env, napi_value v, const char *name, char *buf, size_t n) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  if (t != napi_string) return kd_error(KD_ERR_TYPE, "argument '%s' must be a string", name);
  size_t len = 0;
  napi_get_value_string_utf8(env, v, NULL, 0, &len);
  if (len >= n) return kd_error(KD_ERR_INVALID_ARGUMENT, "argument '%s' is too long (%zu bytes, at most %zu)", name, len, n - 1);
  napi_get_value_string_utf8(env, v, buf, n, &len);
  if (strlen(buf) != len) return kd_error(KD_ERR_INVALID_ARGUMENT, "argument '%s' holds a NUL character", name);
  return KD_OK;
}

static kd_status kd_unbox(napi_env env, const kd_arg_schema *a, int idx, napi_value v, kd_unbox_scratch *s, kd_value *out) {
  if (a->type == KD_ARG_TENSOR || a->type == KD_ARG_TENSOR_OPT || a->type == KD_ARG_TENSOR_OR_SCALAR) {
    /* a live handle is read once, before any napi_typeof (Note [Tensor handles]); anything else
     * goes the general way below, which also words the errors */
    kd_napi_handle *h = kd_napi_handle_of(env, v);
    if (h && h->t) {
      KD_TRY(kd_hold_tensor(s, h->t));
      *out = kd_value_tensor(h->t);
      return KD_OK;
    }
  }
  napi_valuetype t;
  napi_typeof(env, v, &t);
  *out = kd_value_none();
  if (t == napi_undefined || t == napi_null) {
    switch (a->type) {
      case KD_ARG_TENSOR:
      case KD_ARG_TENSOR_OR_SCALAR:
      case KD_ARG_SCALAR:
      case KD_ARG_INT:
      case KD_ARG_INT_OR_INTLIST:
      case KD_ARG_INTLIST:
      case KD_ARG_DOUBLE:
      case KD_ARG_BOOL:
      case KD_ARG_TENSORLIST:
      case KD_ARG_STRING:
        if (a->has_default) return KD_OK; /* kd_call fills the default */
        return kd_error(KD_ERR_TYPE, "missing required argument '%s'", a->name);
      default: return KD_OK;
    }
  }
  switch (a->type) {
    case KD_ARG_TENSOR:
    case KD_ARG_TENSOR_OPT: {
      kd_tensor *tt;
      KD_TRY(kd_unbox_tensor(env, v, a->name, s, &tt));
      *out = kd_value_tensor(tt);
      return KD_OK;
    }
    case KD_ARG_TENSOR_OR_SCALAR: {
      if (t == napi_external) {
        kd_tensor *tt;
        KD_TRY(kd_unbox_tensor(env, v, a->name, s, &tt));
        *out = kd_value_tensor(tt);
        return KD_OK;
      }
      kd_scalar sc;
      kd_status st = kd_unbox_scalar(env, v, t, a->name, &sc);
      if (st != KD_OK) return kd_error(KD_ERR_TYPE, "argument '%s' must be a Tensor, a number or a boolean", a->name);
      *out = kd_value_scalar(sc);
      return KD_OK;
    }
    case KD_ARG_SCALAR:
    case KD_ARG_SCALAR_OPT: {
      kd_scalar sc;
      KD_TRY(kd_unbox_scalar(env, v, t, a->name, &sc));
      *out = kd_value_scalar(sc);
      return KD_OK;
    }
    case KD_ARG_INT:
    case KD_ARG_INT_OPT: {
      int64_t i;
      KD_TRY(kd_unbox_int(env, v, a->name, &i));
      *out = kd_value_int(i);
      return KD_OK;
    }
    case KD_ARG_INT_OR_INTLIST: {
      bool is_array = false;
      napi_is_array(env, v, &is_array);
      if (is_array) return kd_unbox_intlist(env, v, a->name, s, out);
      int64_t i;
      KD_TRY(kd_unbox_int(env, v, a->name, &i));
      *out = kd_value_int(i);
      return KD_OK;
    }
    case KD_ARG_INTLIST:
    case KD_ARG_INTLIST_OPT: return kd_unbox_intlist(env, v, a->name, s, out);
    case KD_ARG_DOUBLE:
    case KD_ARG_DOUBLE_OPT: {
      if (t != napi_number) return kd_error(KD_ERR_TYPE, "argument '%s' must be a number", a->name);
      double d;
      napi_get_value_double(env, v, &d);
      *out = kd_value_double(d);
      return KD_OK;
    }
    case KD_ARG_BOOL:
    case KD_ARG_BOOL_OPT: {
      if (t != napi_boolean) return kd_error(KD_ERR_TYPE, "argument '%s' must be a boolean", a->name);
      bool b;
      napi_get_value_bool(env, v, &b);
      *out = kd_value_bool(b);
      return KD_OK;
    }
    case KD_ARG_DTYPE_OPT: {
      KD_TRY(kd_unbox_string(env, v, a->name, s->strings[idx], sizeof s->strings[idx]));
      kd_dtype dt;
      if (!kd_dtype_parse(s->strings[idx], &dt))
        return kd_error(KD_ERR_TYPE, "unknown dtype '%s' (expected one of float32, float64, float16, bfloat16, int8, "
                        "uint8, int16, int32, int64, bool)", s->strings[idx]);
      *out = kd_value_dtype(dt);
      return KD_OK;
    }
    case KD_ARG_DEVICE_OPT: {
      KD_TRY(kd_unbox_string(env, v, a->name, s->strings[idx], sizeof s->strings[idx]));
      kd_device d;
      KD_TRY(kd_device_parse(s->strings[idx], &d));
      *out = kd_value_device(d);
      return KD_OK;
    }
    case KD_ARG_STRING:
    case KD_ARG_STRING_OPT: {
      KD_TRY(kd_unbox_string(env, v, a->name, s->strings[idx], sizeof s->strings[idx]));
      out->kind = KD_VALUE_STRING;
      out->v.str = s->strings[idx];
      return KD_OK;
    }
    case KD_ARG_DOUBLELIST_OPT: {
      bool is_array = false;
      napi_is_array(env, v, &is_array);
      uint32_t n = 1;
      if (is_array) KD_TRY(kd_unbox_list_length(env, v, a->name, &n));
      double *buf = NULL;
      KD_TRY(kd_scratch_alloc(s, a->name, n, sizeof(double), (void **)&buf));
      for (uint32_t i = 0; i < n; i++) {
        napi_value e = v;
        if (is_array) KD_TRY(kd_list_element(env, v, i, a->name, &e));
        napi_valuetype et;
        napi_typeof(env, e, &et);
        if (et != napi_number) return kd_error(KD_ERR_TYPE, "argument '%s' must be a number or an array of numbers", a->name);
        napi_get_value_double(env, e, &buf[i]);
      }
      out->kind = KD_VALUE_DOUBLELIST;
      out->v.dlist.data = buf;
      out->v.dlist.n = (int)n;
      return KD_OK;
    }
    case KD_ARG_TENSORLIST:
    case KD_ARG_TENSORLIST_OPT: {
      bool is_array = false;
      napi_is_array(env, v, &is_array);
      if (!is_array) return kd_error(KD_ERR_TYPE, "argument '%s' must be an array of Tensors", a->name);
      uint32_t n;
      KD_TRY(kd_unbox_list_length(env, v, a->name, &n));
      kd_tensor **list = NULL;
      KD_TRY(kd_scratch_alloc(s, a->name, n, sizeof(kd_tensor *), (void **)&list));
      for (uint32_t i = 0; i < n; i++) {
        napi_value e;
        KD_TRY(kd_list_element(env, v, i, a->name, &e));
        if (a->type == KD_ARG_TENSORLIST_OPT) {
          napi_valuetype et;
          napi_typeof(env, e, &et);
          if (et == napi_null || et == napi_undefined) {
            list[i] = NULL;
            continue;
          }
        }
        KD_TRY(kd_unbox_tensor(env, e, a->name, s, &list[i]));
      }
      out->kind = KD_VALUE_TENSORLIST;
      out->v.tlist.data = list;
      out->v.tlist.n = (int)n;
      return KD_OK;
    }
  }
  return kd_error(KD_ERR_INTERNAL, "unknown argument type");
}

/* Boxes outs[i] into a napi value, taking over its references. */
static napi_status kd_box(napi_env env, kd_value *v, napi_value *out) {
  if (v->kind == KD_VALUE_TENSOR) {
    kd_tensor *t = v->v.t;
    v->kind = KD_VALUE_NONE;
    return kd_napi_wrap_tensor(env, t, out);
  }
  if (v->kind == KD_VALUE_TENSORLIST) {
    napi_status st = napi_create_array_with_length(env, v->v.tlist.n, out);
    for (int i = 0; i < v->v.tlist.n; i++) {
      kd_tensor *t = v->v.tlist.data[i];
      v->v.tlist.data[i] = NULL;
      napi_value h;
      if (st == napi_ok) st = kd_napi_wrap_tensor(env, t, &h);
      else kd_tensor_release(t);
      if (st == napi_ok) st = napi_set_element(env, *out, i, h);
    }
    free(v->v.tlist.data);
    v->kind = KD_VALUE_NONE;
    return st;
  }
  return napi_get_undefined(env, out);
}

/* Index of the tensor argument that `out` is (the same kd_tensor), or -1. */
static int kd_same_input(const kd_op_info *op, const kd_value *args, size_t argc, const kd_value *out) {
  if (out->kind != KD_VALUE_TENSOR) return -1;
  for (int i = 0; i < op->nargs && i < (int)argc; i++)
    if (args[i].kind == KD_VALUE_TENSOR && args[i].v.t == out->v.t) return i;
  return -1;
}

static napi_value kd_napi_op_entry(napi_env env, napi_callback_info info) {
  size_t argc = KD_NAPI_MAX_ARGS;
  napi_value argv[KD_NAPI_MAX_ARGS];
  void *data;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &data));
  const kd_op_info *op = (const kd_op_info *)data;
  napi_value undefined;
  KD_NAPI_CALL(env, napi_get_undefined(env, &undefined));

  kd_value args[KD_NAPI_MAX_ARGS];
  kd_unbox_scratch scratch;
  kd_scratch_init(&scratch, kd_napi_env_get(env));
  kd_status st = KD_OK;
  for (int i = 0; i < op->nargs && st == KD_OK; i++)
    st = kd_unbox(env, &op->args[i], i, i < (int)argc ? argv[i] : undefined, &scratch, &args[i]);
  kd_value outs[KD_OP_MAX_OUTS];
  if (st == KD_OK && __atomic_load_n(&kd_profiler_enabled, __ATOMIC_RELAXED)) kd_napi_profiler_note_stack(env);
  if (st == KD_OK) st = kd_call((kd_op_id)op->id, args, outs);
  kd_scratch_free(&scratch);
  if (st != KD_OK) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) return NULL;
    return kd_napi_throw(env, st);
  }

  napi_value result = undefined;
  napi_status ns = napi_ok;
  int i_same;
  if (op->flags & KD_OP_FLAG_INPLACE) {
    for (int i = 0; i < KD_OP_MAX_OUTS; i++)
      if (outs[i].kind != KD_VALUE_NONE) kd_value_release(&outs[i]);
  } else if (op->nouts == 1 && (i_same = kd_same_input(op, args, argc, &outs[0])) >= 0) {
    /* the op returned one of its inputs unchanged: hand back that input's own handle */
    result = argv[i_same];
  } else if (op->nouts == 1 || op->nouts == -1) {
    ns = kd_box(env, &outs[0], &result);
  } else {
    ns = napi_create_array_with_length(env, op->nouts, &result);
    for (int i = 0; i < op->nouts && ns == napi_ok; i++) {
      napi_value h;
      ns = kd_box(env, &outs[i], &h);
      if (ns == napi_ok) ns = napi_set_element(env, result, i, h);
    }
  }
  for (int i = 0; i < KD_OP_MAX_OUTS; i++)
    if (outs[i].kind != KD_VALUE_NONE) kd_value_release(&outs[i]);
  if (ns != napi_ok) return kd_napi_throw_last(env, ns);
  kd_napi_sync_external_memory(env);
  return result;
}

/* A JS function running `op` through the generic entry (runtime ops, src/napi/library.c). */
napi_status kd_napi_op_function(napi_env env, const kd_op_info *op, napi_value *out) {
  if (op->nargs > KD_NAPI_MAX_ARGS) return napi_invalid_arg;
  return napi_create_function(env, op->name, NAPI_AUTO_LENGTH, kd_napi_op_entry, (void *)op, out);
}

napi_status kd_napi_register_ops(napi_env env, napi_value exports) {
  napi_value ops;
  napi_status st = napi_create_object(env, &ops);
  for (int i = 0; i < KD_OP_COUNT && st == napi_ok; i++) {
    if (kd_ops[i].nargs > KD_NAPI_MAX_ARGS) return napi_generic_failure;
    st = kd_napi_set_fn(env, ops, kd_ops[i].name, kd_napi_op_entry, (void *)&kd_ops[i]);
  }
  if (st == napi_ok) st = napi_set_named_property(env, exports, "ops", ops);
  return st;
}
