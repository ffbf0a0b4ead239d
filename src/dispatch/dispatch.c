/* dispatch.c - keyset computation, the fall-through walk over kernel[op][key], defaults,
 * device checks, version bumps of in-place ops, and the trace. See dispatch.h. */
#include "dispatch/dispatch.h"
#include "profiler/profiler.h"

#include "dispatch/op_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local kd_dispatch_tls kd_tls;
static int kd_trace;
static kd_capture_note_fn kd_capture_note; /* See Note [Storages a CUDA graph keeps] */

void kd_dispatch_set_capture_note(kd_capture_note_fn fn) { __atomic_store_n(&kd_capture_note, fn, __ATOMIC_RELEASE); }

static const char *const kd_key_names[KD_KEY_COUNT] = {
    [KD_KEY_CPU] = "CPU", [KD_KEY_CUDA] = "CUDA", [KD_KEY_AUTOGRAD] = "Autograd", [KD_KEY_AUTOCAST] = "Autocast",
};

const char *kd_key_name(int k) {
  return (k >= 0 && k < KD_KEY_COUNT && kd_key_names[k]) ? kd_key_names[k] : "?";
}

void kd_dispatch_init(void) {
  const char *e = getenv("KINDLING_DISPATCH_TRACE");
  kd_trace = e && *e && strcmp(e, "0") != 0;
}

kd_dispatch_tls kd_dispatch_tls_get(void) { return kd_tls; }
void kd_dispatch_tls_set(kd_dispatch_tls tls) { kd_tls = tls; }
kd_dispatch_tls *kd_dispatch_tls_here(void) { return &kd_tls; }

void kd_dispatch_register(kd_op_id op, kd_key key, kd_kernel_fn fn) { kd_kernel_table[op][key] = fn; }

void kd_value_release(kd_value *x) {
  if (x->kind == KD_VALUE_TENSOR) {
    kd_tensor_release(x->v.t);
  } else if (x->kind == KD_VALUE_TENSORLIST) {
    for (int i = 0; i < x->v.tlist.n; i++) kd_tensor_release(x->v.tlist.data[i]);
    free(x->v.tlist.data);
  }
  x->kind = KD_VALUE_NONE;
}

/* Runs the highest key of ks whose slot is set; the trace shows skipped keys. */
kd_status kd_redispatch(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  kd_keyset all = ks;
  while (ks) {
    int k = kd_keyset_highest(ks);
    kd_kernel_fn fn = kd_op_kernel(op->id, k);
    if (fn) {
      if (kd_trace) fprintf(stderr, "[kindling dispatch] %s -> %s\n", op->name, kd_key_name(k));
      kd_capture_note_fn note = __atomic_load_n(&kd_capture_note, __ATOMIC_ACQUIRE);
      if (__builtin_expect(note != NULL, 0) && k == KD_KEY_CUDA) {
        const kd_status st = fn(op, ks, args, outs);
        note(op, args, st == KD_OK ? outs : NULL);
        return st;
      }
      return fn(op, ks, args, outs);
    }
    if (kd_trace) fprintf(stderr, "[kindling dispatch] %s: %s (fallthrough)\n", op->name, kd_key_name(k));
    ks &= (kd_keyset) ~KD_KEYSET(k);
  }
  int backend = kd_keyset_highest(all & KD_KEYSET_BACKENDS);
  return kd_error(KD_ERR_NOT_SUPPORTED, "Could not run '%s' with arguments from the '%s' backend: no kernel is registered",
                  op->name, backend >= 0 ? kd_key_name(backend) : "(none)");
}

static kd_status kd_device_mismatch(const kd_op_info *op, kd_device a, kd_device b) {
  char sa[32], sb[32];
  kd_device_format(a, sa, sizeof sa);
  kd_device_format(b, sb, sizeof sb);
  return kd_error(KD_ERR_DEVICE,
                  "Expected all tensors to be on the same device, but found at least two devices, %s and %s! (in '%s')",
                  sa, sb, op->name);
}

/* Note [CPU scalars]: as in PyTorch's binary TensorIterator ops (allow_cpu_scalars), a 0-dim CPU
 * tensor may be an input of an op (flag KD_OP_FLAG_CPU_SCALARS) whose other tensors live on another
 * device: `torch.tensor(0.) + cuda_tensor` is a CUDA tensor. The op runs on the device of its
 * other tensors (the CPU when all are 0-dim CPU tensors); each 0-dim CPU input is first moved
 * there with a `to` call, which autograd records, so its gradient comes back to the CPU. The
 * output of an in-place op (args[0]) is never moved: `cpu_scalar.add_(cuda_tensor)` stays an
 * error, as in PyTorch. Only the mismatch path pays for this. */
static bool kd_is_cpu_scalar(const kd_tensor *t) { return t->ndim == 0 && kd_tensor_device(t).type == KD_DEVICE_CPU; }

/* Moves the 0-dim CPU tensor args of op to the device of the others (See Note [CPU scalars]);
 * moved[i] holds each new reference, released by the caller. A mismatch left is an error. */
static kd_status kd_move_cpu_scalars(const kd_op_info *op, kd_value *args, kd_tensor **moved) {
  bool have_device = false;
  kd_device dev = kd_device_cpu();
  for (int i = 0; i < op->nargs; i++) {
    if (args[i].kind != KD_VALUE_TENSOR) continue;
    const kd_tensor *t = args[i].v.t;
    if (kd_is_cpu_scalar(t) && !(i == 0 && (op->flags & KD_OP_FLAG_INPLACE))) continue;
    if (have_device && !kd_device_eq(kd_tensor_device(t), dev)) return kd_device_mismatch(op, dev, kd_tensor_device(t));
    dev = kd_tensor_device(t);
    have_device = true;
  }
  if (!have_device) return KD_OK; /* all 0-dim CPU tensors: no mismatch to resolve */
  for (int i = 0; i < op->nargs; i++) {
    if (args[i].kind != KD_VALUE_TENSOR || kd_device_eq(kd_tensor_device(args[i].v.t), dev)) continue;
    kd_value to_args[4] = {kd_value_tensor(args[i].v.t), kd_value_none(), kd_value_device(dev), kd_value_bool(false)};
    KD_TRY(kd_call1(KD_OP_to, to_args, &moved[i]));
    args[i].v.t = moved[i];
  }
  return KD_OK;
}

static kd_status kd_call_op(const kd_op_info *op, kd_value *args, kd_value *outs);

#define KD_CPU_SCALARS_MAX_ARGS 8 /* binary ops have 2-4 arguments */

/* kd_call_op with the 0-dim CPU tensors of args moved (See Note [CPU scalars]); args are restored. */
static kd_status kd_call_op_cpu_scalars(const kd_op_info *op, kd_value *args, kd_value *outs) {
  if (op->nargs > KD_CPU_SCALARS_MAX_ARGS) return kd_error(KD_ERR_INTERNAL, "op '%s' has too many arguments for CPU scalars", op->name);
  kd_tensor *moved[KD_CPU_SCALARS_MAX_ARGS] = {0};
  kd_tensor *orig[KD_CPU_SCALARS_MAX_ARGS];
  for (int i = 0; i < op->nargs; i++) orig[i] = args[i].kind == KD_VALUE_TENSOR ? args[i].v.t : NULL;
  kd_status st = kd_move_cpu_scalars(op, args, moved);
  if (st == KD_OK) st = kd_call_op(op, args, outs);
  for (int i = 0; i < op->nargs; i++) {
    if (!moved[i]) continue;
    args[i].v.t = orig[i];
    kd_tensor_release(moved[i]);
  }
  return st;
}

static kd_status kd_call_op(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_keyset ks = 0;
  bool have_device = false;
  kd_device dev = kd_device_cpu();
  for (int i = 0; i < op->nargs; i++) {
    kd_value *a = &args[i];
    if (a->kind == KD_VALUE_NONE && op->args[i].has_default) *a = op->args[i].def;
    if (a->kind == KD_VALUE_TENSOR) {
      kd_device d = kd_tensor_device(a->v.t);
      if (have_device && !kd_device_eq(d, dev) && !(op->flags & KD_OP_FLAG_CROSS_DEVICE)) {
        if (op->flags & KD_OP_FLAG_CPU_SCALARS) return kd_call_op_cpu_scalars(op, args, outs);
        return kd_device_mismatch(op, dev, d);
      }
      dev = d;
      have_device = true;
      ks |= a->v.t->keys;
    } else if (a->kind == KD_VALUE_TENSORLIST) {
      for (int j = 0; j < a->v.tlist.n; j++) {
        if (!a->v.tlist.data[j]) continue; /* a null entry of a Tensor?[] */
        kd_device d = kd_tensor_device(a->v.tlist.data[j]);
        if (have_device && !kd_device_eq(d, dev)) return kd_device_mismatch(op, dev, d);
        dev = d;
        have_device = true;
        ks |= a->v.tlist.data[j]->keys;
      }
    }
  }
  if (!ks) { /* factory: the device argument picks the backend */
    if (op->device_arg >= 0 && args[op->device_arg].kind == KD_VALUE_DEVICE) dev = args[op->device_arg].v.device;
    KD_TRY(kd_device_check(dev));
    ks = (kd_keyset)(KD_KEYSET(kd_device_key(dev)) | KD_KEYSET(KD_KEY_AUTOGRAD));
  }
  ks = (kd_keyset)((ks | kd_tls.included) & ~kd_tls.excluded);
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) outs[i] = kd_value_none();
  kd_status st = kd_redispatch(op, ks, args, outs);
  if (st == KD_OK && (op->flags & KD_OP_FLAG_INPLACE)) kd_storage_bump_version(args[0].v.t->storage);
  return st;
}

kd_status kd_call(kd_op_id id, kd_value *args, kd_value *outs) {
  const kd_op_info *op = kd_op_info_of(id); /* generated or runtime (op_registry.h) */
  if (!op) return kd_error(KD_ERR_INTERNAL, "no op with id %d", (int)id);
  if (__builtin_expect(__atomic_load_n(&kd_profiler_enabled, __ATOMIC_RELAXED) != 0, 0)) return kd_profiler_call(op, args, outs, kd_call_op);
  return kd_call_op(op, args, outs);
}

kd_status kd_call1(kd_op_id op, kd_value *args, kd_tensor **out) {
  kd_value outs[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(op, args, outs));
  if (outs[0].kind != KD_VALUE_TENSOR) {
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
    return kd_error(KD_ERR_INTERNAL, "op '%s' did not return a tensor", kd_op_info_of(op)->name);
  }
  *out = outs[0].v.t;
  for (int i = 1; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
  return KD_OK;
}
