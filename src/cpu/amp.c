/* amp.c - CPU kernel of gradient scaling (src/ops/oplist/amp.js), kd_cpu_amp with codes:
 *   KD_AMP_UNSCALE       PyTorch's _amp_foreach_non_finite_check_and_unscale_: every gradient
 *                        of the list times invScale in place, in ONE iterator pass per tensor
 *                        that also notes any inf/NaN (of the value before scaling) in foundInf.
 *   KD_AMP_UPDATE_SCALE  PyTorch's _amp_update_scale_: the scale/growth-tracker update, on
 *                        1-element tensors, so it can stay on the device.
 * Everything is checked before anything is written (PyTorch's messages). float16/bfloat16
 * compute in float32; float64 gradients in float64 (invScale is float32, as PyTorch's).
 * Tensors on a device go to the device-op hook (kind KD_DEV_OP_AMP, cuda/ops_amp.cu). */
#include "core/storage.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

typedef struct kd_amp_ctx {
  float inv;
  int found; /* set to 1 by any thread that saw a non-finite value (relaxed stores) */
} kd_amp_ctx;

/* v - v is 0 for finite v and NaN for inf/NaN: a branch-free test gcc vectorizes. */
#define KD_AMP_DEF(SFX, DT, T, CT, LD, ST, MS, K, UT)                                          \
  static void kd_amp_unscale_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    kd_amp_ctx *c = (kd_amp_ctx *)vc;                                                          \
    const CT inv = (CT)c->inv;                                                                 \
    int bad = 0;                                                                               \
    if (strides[0] == (int64_t)sizeof(T)) {                                                    \
      T *restrict p = (T *)data[0];                                                            \
      for (int64_t i = 0; i < n; i++) {                                                        \
        const CT v = LD(p[i]);                                                                 \
        bad |= !((v - v) == (CT)0);                                                            \
        p[i] = ST(v * inv);                                                                    \
      }                                                                                        \
    } else {                                                                                   \
      for (int64_t i = 0; i < n; i++) {                                                        \
        T *q = (T *)(data[0] + i * strides[0]);                                                \
        const CT v = LD(*q);                                                                   \
        bad |= !((v - v) == (CT)0);                                                            \
        *q = ST(v * inv);                                                                      \
      }                                                                                        \
    }                                                                                          \
    if (bad) __atomic_store_n(&c->found, 1, __ATOMIC_RELAXED);                                 \
  }
KD_ROWS_FLOAT(KD_AMP_DEF)
#define KD_AMP_ENTRY(SFX, DT, ...) [DT] = kd_amp_unscale_##SFX,
static const kd_iter_loop_fn kd_amp_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_AMP_ENTRY)};

static bool kd_amp_on_device(const kd_tensor *t) { return kd_tensor_device(t).type != KD_DEVICE_CPU; }

/* A 1-element tensor's value read as float (CPU) */
static float kd_amp_read_f32(const kd_tensor *t) { return *(const float *)kd_tensor_data(t); }

static kd_status kd_amp_check1(const kd_tensor *t, const char *name, kd_dtype dt, const char *kind) {
  if (kd_tensor_numel(t) != 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s must be a 1-element tensor.", name);
  if (t->dtype != dt) return kd_error(KD_ERR_DTYPE, "%s must be %s tensor.", name, kind);
  return KD_OK;
}

static kd_status kd_amp_unscale(kd_value *args) {
  kd_tensor *const *g = args[0].v.tlist.data;
  const int n = args[0].kind == KD_VALUE_TENSORLIST ? args[0].v.tlist.n : 0;
  kd_tensor *found = args[1].v.t, *inv = args[2].v.t;
  KD_TRY(kd_amp_check1(inv, "inv_scale", KD_DTYPE_F32, "a float"));
  KD_TRY(kd_amp_check1(found, "found_inf", KD_DTYPE_F32, "a float"));
  for (int i = 0; i < n; i++) {
    if (!g[i]) return kd_error(KD_ERR_INVALID_ARGUMENT, "_amp_foreach_non_finite_check_and_unscale_: grads[%d] is null", i);
    if (!kd_dtype_is_float(g[i]->dtype))
      return kd_error(KD_ERR_NOT_SUPPORTED, "\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for '%s'",
                      kd_cpu_torch_name(g[i]->dtype));
    KD_TRY(kd_cpu_check_no_internal_overlap(g[i]));
  }
  const bool dev = kd_amp_on_device(found);
  kd_amp_ctx c = {dev ? 0.0f : kd_amp_read_f32(inv), 0};
  for (int i = 0; i < n; i++) {
    kd_iter_operand op = kd_iter_operand_of(g[i]);
    kd_iter it;
    KD_TRY(kd_iter_build(&it, &op, 1, 1, 0));
    if (dev) {
      if (!it.numel) continue;
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_AMP;
      d.code = KD_AMP_UNSCALE;
      d.dtype = g[i]->dtype;
      d.it = &it;
      d.ops = &op;
      d.i[0] = (int64_t)(intptr_t)kd_tensor_data(found);
      d.i[1] = (int64_t)(intptr_t)kd_tensor_data(inv);
      KD_TRY(kd_cpu_device_run(kd_tensor_device(found), &d));
    } else {
      kd_iter_for_each(&it, kd_amp_loops[g[i]->dtype], &c);
    }
    kd_storage_bump_version(g[i]->storage);
  }
  if (!dev && c.found) *(float *)kd_tensor_data(found) = 1.0f;
  if (!dev) kd_storage_bump_version(found->storage);
  return KD_OK;
}

static kd_status kd_amp_update_scale(kd_value *args, kd_value *outs) {
  kd_tensor *scale = args[0].v.t, *tracker = args[1].v.t, *found = args[2].v.t;
  const double growth = args[3].v.d, backoff = args[4].v.d;
  const int64_t interval = args[5].v.i;
  KD_TRY(kd_amp_check1(tracker, "growth_tracker", KD_DTYPE_I32, "an int"));
  KD_TRY(kd_amp_check1(scale, "current_scale", KD_DTYPE_F32, "a float"));
  KD_TRY(kd_amp_check1(found, "found_inf", KD_DTYPE_F32, "a float"));
  if (kd_amp_on_device(scale)) {
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_AMP;
    d.code = KD_AMP_UPDATE_SCALE;
    d.dtype = KD_DTYPE_F32;
    d.i[0] = (int64_t)(intptr_t)kd_tensor_data(scale);
    d.i[1] = (int64_t)(intptr_t)kd_tensor_data(tracker);
    d.i[2] = (int64_t)(intptr_t)kd_tensor_data(found);
    d.i[3] = interval;
    d.d[0] = growth;
    d.d[1] = backoff;
    KD_TRY(kd_cpu_device_run(kd_tensor_device(scale), &d));
  } else {
    /* PyTorch's _amp_update_scale_cpu_kernel, operation for operation */
    float *s = (float *)kd_tensor_data(scale);
    int32_t *t = (int32_t *)kd_tensor_data(tracker);
    if (*(const float *)kd_tensor_data(found)) {
      *s = (float)((*s) * backoff);
      *t = 0;
    } else {
      const int32_t successful = (*t) + 1;
      if (successful == interval) {
        const float ns = (float)((*s) * growth);
        if (isfinite(ns)) *s = ns;
        *t = 0;
      } else {
        *t = successful;
      }
    }
  }
  kd_storage_bump_version(scale->storage);
  kd_storage_bump_version(tracker->storage);
  kd_out_retain(outs, 0, scale);
  return KD_OK;
}

KD_KERNEL(kd_cpu_amp) {
  (void)ks;
  if (op->code == KD_AMP_UNSCALE) {
    KD_TRY(kd_amp_unscale(args));
    outs[0].kind = KD_VALUE_TENSORLIST;
    outs[0].v.tlist.data = NULL;
    outs[0].v.tlist.n = 0;
    return KD_OK;
  }
  if (op->code == KD_AMP_UPDATE_SCALE) return kd_amp_update_scale(args, outs);
  return kd_error(KD_ERR_INTERNAL, "kd_cpu_amp: unknown code %d", op->code);
}
