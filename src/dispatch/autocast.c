/* autocast.c - the Autocast key: thread-local autocast state, the cast cache and the one generic
 * kernel registered for every op with an autocast policy. See autocast.h and PyTorch 1.13's
 * aten/src/ATen/autocast_mode.cpp (cached_cast, promote_type, the WrapFunction policies). */
#include "dispatch/autocast.h"

#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "dispatch/op_registry.h"

typedef struct kd_cast_entry {
  kd_tensor *src, *dst; /* both retained: src cannot die, so its address stays a valid key */
  uint32_t version;     /* src's version when cast */
  bool recorded;        /* dst was made with grad mode on (has a grad_fn back to src) */
} kd_cast_entry;

static _Thread_local kd_autocast_state kd_ac = {
    .enabled = {false, false}, .dtype = {KD_DTYPE_BF16, KD_DTYPE_F16}, .cache_enabled = true, .nesting = 0};
static _Thread_local kd_cast_entry *kd_cache;
static _Thread_local int kd_cache_n, kd_cache_cap;
static _Thread_local kd_autocast_stats kd_stats;

kd_autocast_state kd_autocast_get(void) { return kd_ac; }

void kd_autocast_set(const kd_autocast_state *s) {
  kd_ac = *s;
  kd_dispatch_tls tls = kd_dispatch_tls_get();
  bool any = false;
  for (int d = 0; d < KD_AUTOCAST_NDEV; d++) any = any || s->enabled[d];
  if (any) tls.included |= KD_KEYSET(KD_KEY_AUTOCAST);
  else tls.included &= (kd_keyset)~KD_KEYSET(KD_KEY_AUTOCAST);
  kd_dispatch_tls_set(tls);
}

void kd_autocast_clear_cache(void) {
  for (int i = 0; i < kd_cache_n; i++) {
    kd_tensor_release(kd_cache[i].src);
    kd_tensor_release(kd_cache[i].dst);
  }
  free(kd_cache);
  kd_cache = NULL;
  kd_cache_n = kd_cache_cap = 0;
}

kd_autocast_stats kd_autocast_stats_get(void) {
  kd_autocast_stats s = kd_stats;
  s.cached = kd_cache_n;
  return s;
}

/* PyTorch's is_eligible: a floating tensor other than float64 (the device is checked by the
 * caller: only tensors on the scope's device type are looked at). */
static inline bool kd_ac_eligible(kd_dtype t) { return kd_dtype_is_float(t) && t != KD_DTYPE_F64; }

void kd_autocast_plan(int policy, kd_dtype lower, int n, const kd_dtype *dtypes, kd_dtype *targets, int *set_dtype) {
  *set_dtype = -1;
  kd_dtype to = lower;
  switch (policy) {
    case KD_AUTOCAST_LOWER: to = lower; break;
    case KD_AUTOCAST_FP32: to = KD_DTYPE_F32; break;
    case KD_AUTOCAST_PROMOTE:
      /* promote_type: start at the lower dtype; float32 wins, float64 is ignored */
      for (int i = 0; i < n; i++) {
        if (!kd_ac_eligible(dtypes[i])) continue;
        if (to == KD_DTYPE_F32 || dtypes[i] == KD_DTYPE_F32) to = KD_DTYPE_F32;
        else if (to != dtypes[i]) to = kd_promote_types(to, dtypes[i]); /* float16 with bfloat16: PyTorch errors */
      }
      break;
    case KD_AUTOCAST_FP32_SET_OPT_DTYPE:
      if (n > 0 && kd_ac_eligible(dtypes[0])) *set_dtype = KD_DTYPE_F32;
      for (int i = 0; i < n; i++) targets[i] = dtypes[i];
      return;
    default:
      for (int i = 0; i < n; i++) targets[i] = dtypes[i];
      return;
  }
  for (int i = 0; i < n; i++) targets[i] = kd_ac_eligible(dtypes[i]) ? to : dtypes[i];
}

/* The cast of one tensor (a new reference in *out), through the cache when PyTorch's heuristic
 * allows: a float32 leaf that requires grad (a weight), cast to the lower-precision dtype. */
static kd_status kd_ac_cast(kd_tensor *t, kd_dtype to, kd_dtype lower, kd_tensor **out) {
  const kd_autograd_meta *m = kd_meta(t);
  bool cacheable = kd_ac.cache_enabled && to == lower && t->dtype == KD_DTYPE_F32 && m && m->requires_grad &&
                   !m->base && kd_is_leaf(t);
  bool rec = kd_grad_enabled();
  int slot = -1;
  if (cacheable) {
    for (int i = 0; i < kd_cache_n; i++) {
      kd_cast_entry *e = &kd_cache[i];
      if (e->src != t) continue;
      if (e->dst->dtype == to && e->version == kd_tensor_version(t) && (e->recorded || !rec)) {
        kd_stats.cache_hits++;
        kd_tensor_retain(e->dst);
        *out = e->dst;
        return KD_OK;
      }
      slot = i; /* stale: replaced below */
      break;
    }
  }
  kd_value a[4] = {kd_value_tensor(t), kd_value_dtype(to), kd_value_none(), kd_value_bool(false)};
  KD_TRY(kd_call1(KD_OP_to, a, out));
  kd_stats.casts++;
  if (!cacheable) return KD_OK;
  if (slot < 0) {
    if (kd_cache_n == kd_cache_cap) {
      int cap = kd_cache_cap ? 2 * kd_cache_cap : 16;
      kd_cast_entry *p = (kd_cast_entry *)realloc(kd_cache, sizeof *p * (size_t)cap);
      if (!p) return KD_OK; /* no room to cache: the cast itself is fine */
      kd_cache = p;
      kd_cache_cap = cap;
    }
    slot = kd_cache_n++;
    kd_tensor_retain(t);
  } else {
    kd_tensor_release(kd_cache[slot].dst);
  }
  kd_cache[slot].src = t;
  kd_cache[slot].dst = *out;
  kd_tensor_retain(*out);
  kd_cache[slot].version = kd_tensor_version(t);
  kd_cache[slot].recorded = rec;
  return KD_OK;
}

/* Test hook: a policy that replaces the table's (0xff: none set). Process-wide, set only by tests. */
static unsigned char kd_ac_override[KD_OP_COUNT][KD_AUTOCAST_NDEV];
static bool kd_ac_overridden;

void kd_autocast_override(int op, int dev, int policy) {
  if (!kd_ac_overridden) {
    memset(kd_ac_override, 0xff, sizeof kd_ac_override);
    kd_ac_overridden = true;
  }
  if (op >= 0 && op < KD_OP_COUNT && dev >= 0 && dev < KD_AUTOCAST_NDEV) kd_ac_override[op][dev] = policy < 0 ? 0xff : (unsigned char)policy;
}

int kd_autocast_policy_of(int op, int dev) {
  if (op >= KD_OP_COUNT) return kd_op_runtime_autocast(op, dev); /* a runtime op */
  if (kd_ac_overridden && kd_ac_override[op][dev] != 0xff) return kd_ac_override[op][dev];
  return kd_op_autocast_policy[op][dev];
}

static int kd_ac_dev_of(kd_device d) {
  return d.type == KD_DEVICE_CPU ? KD_AUTOCAST_DEV_CPU : d.type == KD_DEVICE_CUDA ? KD_AUTOCAST_DEV_CUDA : -1;
}

/* The device type of the call: its first tensor's (kd_call checked they agree). */
static int kd_ac_call_dev(const kd_op_info *op, const kd_value *args) {
  for (int i = 0; i < op->nargs; i++) {
    if (args[i].kind == KD_VALUE_TENSOR) return kd_ac_dev_of(kd_tensor_device(args[i].v.t));
    if (args[i].kind == KD_VALUE_TENSORLIST)
      for (int j = 0; j < args[i].v.tlist.n; j++)
        if (args[i].v.tlist.data[j]) return kd_ac_dev_of(kd_tensor_device(args[i].v.tlist.data[j]));
  }
  return -1;
}

#define KD_AC_MAX_TENSORS 64

kd_status kd_autocast_kernel(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  const kd_keyset below = ks & kd_keyset_below(KD_KEY_AUTOCAST);
  kd_dispatch_tls saved = kd_dispatch_tls_get(), tls = saved;
  tls.excluded |= KD_KEYSET(KD_KEY_AUTOCAST);
  const int dev = kd_ac_call_dev(op, args);
  const int policy = dev >= 0 && kd_ac.enabled[dev] ? kd_autocast_policy_of(op->id, dev) : KD_AUTOCAST_NONE;
  /* no policy for this device type: fall through, leaving autocast on for the ops a
   * composite calls (PyTorch's fallthrough kernel) */
  if (policy == KD_AUTOCAST_NONE) return kd_redispatch(op, below, args, outs);
  if (policy == KD_AUTOCAST_BANNED)
    return kd_error(KD_ERR_NOT_SUPPORTED,
                    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
                    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
                    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
                    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
                    "safe to autocast. (in '%s')", op->name);

  if (policy == KD_AUTOCAST_NATIVE) { /* a kindling composite of a PyTorch native op */
    kd_dispatch_tls_set(tls);
    kd_status st = kd_redispatch(op, below, args, outs);
    kd_dispatch_tls_set(saved);
    return st;
  }

  /* the tensors of the call, in argument order (list elements in place); on the stack for up to
   * KD_AC_MAX_TENSORS, else on the heap */
  kd_value cargs[32];
  kd_tensor **lists[32] = {0};
  if (op->nargs > 32) return kd_error(KD_ERR_INTERNAL, "autocast: too many arguments for '%s'", op->name);
  memcpy(cargs, args, sizeof(kd_value) * (size_t)op->nargs);
  int total = 0;
  for (int i = 0; i < op->nargs; i++)
    total += cargs[i].kind == KD_VALUE_TENSOR ? 1 : cargs[i].kind == KD_VALUE_TENSORLIST ? cargs[i].v.tlist.n : 0;
  kd_tensor **slots_s[KD_AC_MAX_TENSORS], ***slots = slots_s;
  kd_dtype dts_s[KD_AC_MAX_TENSORS], to_s[KD_AC_MAX_TENSORS], *dts = dts_s, *to = to_s;
  bool made_s[KD_AC_MAX_TENSORS] = {0}, *made = made_s;
  void *heap = NULL;
  if (total > KD_AC_MAX_TENSORS) {
    size_t each = sizeof(kd_tensor **) + 2 * sizeof(kd_dtype) + sizeof(bool);
    heap = calloc((size_t)total, each);
    if (!heap) return kd_error(KD_ERR_OOM, "autocast: out of memory");
    slots = (kd_tensor ***)heap;
    dts = (kd_dtype *)(slots + total);
    to = dts + total;
    made = (bool *)(to + total);
  }
  int n = 0;
  kd_status st = KD_OK;
  for (int i = 0; i < op->nargs && st == KD_OK; i++) {
    if (cargs[i].kind == KD_VALUE_TENSOR) {
      slots[n++] = &cargs[i].v.t;
    } else if (cargs[i].kind == KD_VALUE_TENSORLIST && cargs[i].v.tlist.n > 0) {
      int m = cargs[i].v.tlist.n;
      lists[i] = (kd_tensor **)malloc(sizeof(kd_tensor *) * (size_t)m);
      if (!lists[i]) { st = kd_error(KD_ERR_OOM, "autocast: out of memory"); break; }
      memcpy(lists[i], cargs[i].v.tlist.data, sizeof(kd_tensor *) * (size_t)m);
      cargs[i].v.tlist.data = lists[i];
      for (int j = 0; j < m; j++)
        if (lists[i][j]) slots[n++] = &lists[i][j];
    }
  }
  /* only tensors on the scope's device type take part (PyTorch's is_autocast_eligible) */
  for (int k = 0; k < n; k++) {
    kd_tensor *t = *slots[k];
    dts[k] = kd_ac_dev_of(kd_tensor_device(t)) == dev ? t->dtype : KD_DTYPE_I64; /* non-floating: stays */
  }
  int set_dtype = -1;
  if (st == KD_OK) kd_autocast_plan(policy, kd_ac.dtype[dev], n, dts, to, &set_dtype);
  if (policy == KD_AUTOCAST_FP32_SET_OPT_DTYPE && op->dtype_arg < 0 && st == KD_OK) {
    /* an op without a dtype argument: cast its inputs instead */
    kd_autocast_plan(KD_AUTOCAST_FP32, kd_ac.dtype[dev], n, dts, to, &set_dtype);
    set_dtype = -1;
  }
  kd_dispatch_tls_set(tls);
  for (int k = 0; k < n && st == KD_OK; k++) {
    if (to[k] == dts[k]) continue;
    kd_tensor *c = NULL;
    st = kd_ac_cast(*slots[k], to[k], kd_ac.dtype[dev], &c);
    if (st == KD_OK) { *slots[k] = c; made[k] = true; }
  }
  if (st == KD_OK && set_dtype >= 0 && cargs[op->dtype_arg].kind == KD_VALUE_NONE)
    cargs[op->dtype_arg] = kd_value_dtype((kd_dtype)set_dtype);
  if (st == KD_OK) st = kd_redispatch(op, below, cargs, outs);
  kd_dispatch_tls_set(saved);
  for (int k = 0; k < n; k++) if (made[k]) kd_tensor_release(*slots[k]);
  for (int i = 0; i < op->nargs; i++) free(lists[i]);
  free(heap);
  return st;
}
