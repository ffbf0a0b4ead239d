/* index_mask.c - the data-dependent-shape indexing ops: maskedSelect (and its backward), nonzero,
 * and nn.functional.oneHot. Their outputs are laid out in row-major order of the input, which the
 * iterator does not promise (it reorders dims for speed), so these walk the input with a
 * row-major odometer over the broadcast shape instead; they are serial (a count pass, then a
 * fill pass), as PyTorch's CPU kernels are. */
#include "cpu/index_common.h"
#include "cpu/device_op.h"

/* ---- device paths (cuda/ops_shape.cu): maskedSelect's output positions are the inclusive
 * cumsum of the broadcast mask in row-major order (the cumsum op, i.e. the device's scan), whose
 * last value is the count (one synchronous read, as the CPU's count pass); oneHot's bounds come
 * from the min/max ops. ---- */

/* The broadcast mask's positions: *pos a contiguous int64 tensor of `shape`, *count its last value. */
static kd_status kd_mask_positions_dev(const kd_tensor *mask, const int64_t *shape, int nd, kd_tensor **pos,
                                       int64_t *count) {
  int64_t st[KD_MAX_DIMS], n = kd_shape_numel(shape, nd), one = 1;
  int off = nd - mask->ndim;
  for (int d = 0; d < nd; d++) {
    int sd = d - off;
    st[d] = (sd < 0 || mask->sizes[sd] == 1) ? 0 : mask->strides[sd];
  }
  kd_tensor *mv = NULL, *mi = NULL, *flat = NULL, *cs = NULL, *last = NULL;
  kd_status s = kd_tensor_new_view(mask, shape, st, nd, mask->offset, &mv);
  if (s == KD_OK) s = kd_tensor_empty(shape, nd, KD_DTYPE_I64, kd_tensor_device(mask), &mi);
  if (s == KD_OK && n > 0) s = kd_cpu_copy_into(mi, mv);
  if (s == KD_OK) s = kd_tensor_new_view(mi, &n, &one, 1, mi->offset, &flat);
  if (s == KD_OK) {
    kd_value a[3] = {kd_value_tensor(flat), kd_value_int(0), kd_value_none()};
    s = kd_call1(KD_OP_cumsum, a, &cs);
  }
  *count = 0;
  if (s == KD_OK && n > 0) s = kd_tensor_new_view(cs, NULL, NULL, 0, cs->offset + (n - 1) * cs->strides[0], &last);
  if (s == KD_OK && n > 0) {
    kd_scalar v;
    s = kd_cpu_item(last, &v);
    if (s == KD_OK) *count = kd_scalar_to_int(v);
  }
  if (s == KD_OK) { /* cs (contiguous, fresh) seen with the broadcast shape */
    int64_t cst[KD_MAX_DIMS], acc = 1;
    for (int d = nd - 1; d >= 0; d--) { cst[d] = acc; acc *= shape[d]; }
    s = kd_tensor_new_view(cs, shape, cst, nd, cs->offset, pos);
  }
  if (mv) kd_tensor_release(mv);
  if (mi) kd_tensor_release(mi);
  if (flat) kd_tensor_release(flat);
  if (cs) kd_tensor_release(cs);
  if (last) kd_tensor_release(last);
  return s;
}

/* KD_DEV_OP_MASKED over ops (3 operands, op 0 the iteration's output). */
static kd_status kd_masked_dev_run(kd_device dev, int code, kd_iter_operand *ops, kd_dtype dt, void *flat) {
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, 3, 1, 0));
  if (!it.numel) return KD_OK;
  kd_dev_op d;
  memset(&d, 0, sizeof d);
  d.kind = KD_DEV_OP_MASKED;
  d.code = code;
  d.dtype = dt;
  d.it = &it;
  d.ops = ops;
  d.i[0] = (int64_t)(intptr_t)flat;
  d.i[1] = (int64_t)kd_dtype_size(dt);
  return kd_cpu_device_run(dev, &d);
}

static kd_status kd_masked_select_dev(kd_tensor *self, kd_tensor *mask, const int64_t *shape, int nd, kd_tensor **out) {
  kd_tensor *pos;
  int64_t count;
  KD_TRY(kd_mask_positions_dev(mask, shape, nd, &pos, &count));
  kd_status st = kd_tensor_empty(&count, 1, self->dtype, kd_tensor_device(self), out);
  if (st == KD_OK && count > 0) {
    kd_iter_operand ops[3] = {kd_iter_operand_of(pos), kd_iter_operand_of(mask), kd_iter_operand_of(self)};
    st = kd_masked_dev_run(kd_tensor_device(self), 0, ops, self->dtype, kd_tensor_data(*out));
  }
  kd_tensor_release(pos);
  if (st != KD_OK) kd_tensor_release(*out);
  return st;
}

/* Row-major odometer over `shape` for up to 3 operands with element strides. */
typedef struct kd_odo {
  int nd, nops;
  int64_t shape[KD_MAX_DIMS], idx[KD_MAX_DIMS];
  int64_t st[3][KD_MAX_DIMS];
  char *p[3];
  int64_t es[3];
} kd_odo;

static void kd_odo_step(kd_odo *o) {
  for (int d = o->nd - 1; d >= 0; d--) {
    for (int k = 0; k < o->nops; k++) o->p[k] += o->st[k][d] * o->es[k];
    if (++o->idx[d] < o->shape[d]) return;
    for (int k = 0; k < o->nops; k++) o->p[k] -= o->st[k][d] * o->es[k] * o->shape[d];
    o->idx[d] = 0;
  }
}

/* Adds operand t broadcast to o->shape. */
static void kd_odo_add(kd_odo *o, const kd_tensor *t) {
  int k = o->nops++, off = o->nd - t->ndim;
  for (int d = 0; d < o->nd; d++) {
    int sd = d - off;
    o->st[k][d] = (sd < 0 || t->sizes[sd] == 1) ? 0 : t->strides[sd];
  }
  o->p[k] = kd_tensor_data(t);
  o->es[k] = (int64_t)kd_dtype_size(t->dtype);
}

static inline bool kd_is_nz(const char *p, kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F32: { uint32_t u; memcpy(&u, p, 4); return (u & 0x7fffffffu) != 0; }
    case KD_DTYPE_F64: { uint64_t u; memcpy(&u, p, 8); return (u & 0x7fffffffffffffffull) != 0; }
    case KD_DTYPE_F16: case KD_DTYPE_BF16: { uint16_t u; memcpy(&u, p, 2); return (u & 0x7fffu) != 0; }
    case KD_DTYPE_I16: { uint16_t u; memcpy(&u, p, 2); return u != 0; }
    case KD_DTYPE_I32: { uint32_t u; memcpy(&u, p, 4); return u != 0; }
    case KD_DTYPE_I64: { uint64_t u; memcpy(&u, p, 8); return u != 0; }
    default: return *(const uint8_t *)p != 0;
  }
}

static kd_status kd_nonzero_staged(const kd_tensor *t, kd_tensor **out);

kd_status kd_cpu_nonzero_of(const kd_tensor *t, kd_tensor **out) {
  if (kd_tensor_device(t).type != KD_DEVICE_CPU) return kd_nonzero_staged(t, out);
  int64_t n = kd_tensor_numel(t), count = 0;
  kd_odo o = {0};
  o.nd = t->ndim;
  memcpy(o.shape, t->sizes, sizeof(int64_t) * t->ndim);
  kd_odo_add(&o, t);
  char *start = o.p[0];
  for (int64_t i = 0; i < n; i++, kd_odo_step(&o)) count += kd_is_nz(o.p[0], t->dtype);
  int64_t osz[2] = {count, t->ndim};
  KD_TRY(kd_tensor_empty(osz, 2, KD_DTYPE_I64, kd_tensor_device(t), out));
  int64_t *r = (int64_t *)kd_tensor_data(*out);
  memset(o.idx, 0, sizeof o.idx);
  o.p[0] = start;
  for (int64_t i = 0; i < n; i++, kd_odo_step(&o))
    if (kd_is_nz(o.p[0], t->dtype)) {
      memcpy(r, o.idx, sizeof(int64_t) * t->ndim);
      r += t->ndim;
    }
  return KD_OK;
}

KD_KERNEL(kd_cpu_nonzero) {
  (void)op, (void)ks;
  kd_tensor *r;
  KD_TRY(kd_cpu_nonzero_of(args[0].v.t, &r));
  kd_out_take(outs, 0, r);
  return KD_OK;
}

/* Broadcast shape of self and mask, with PyTorch's mask dtype check. */
static kd_status kd_mask_shape(const kd_tensor *self, const kd_tensor *mask, const char *name, int64_t *shape, int *nd) {
  if (mask->dtype != KD_DTYPE_BOOL && mask->dtype != KD_DTYPE_U8)
    return kd_error(KD_ERR_DTYPE, "%s: expected BoolTensor for mask", name);
  return kd_shape_broadcast(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, nd);
}

KD_KERNEL(kd_cpu_masked_select) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t, *mask = args[1].v.t;
  kd_odo o = {0};
  KD_TRY(kd_mask_shape(self, mask, "masked_select", o.shape, &o.nd));
  if (kd_tensor_device(self).type != KD_DEVICE_CPU || kd_tensor_device(mask).type != KD_DEVICE_CPU) {
    kd_tensor *r;
    KD_TRY(kd_masked_select_dev(self, mask, o.shape, o.nd, &r));
    kd_out_take(outs, 0, r);
    return KD_OK;
  }
  int64_t n = kd_shape_numel(o.shape, o.nd), count = 0;
  kd_odo_add(&o, mask);
  kd_odo_add(&o, self);
  char *m0 = o.p[0], *s0 = o.p[1];
  for (int64_t i = 0; i < n; i++, kd_odo_step(&o)) count += *(const uint8_t *)o.p[0] != 0;
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(&count, 1, self->dtype, kd_tensor_device(self), &out));
  char *r = kd_tensor_data(out);
  size_t es = kd_dtype_size(self->dtype);
  memset(o.idx, 0, sizeof o.idx);
  o.p[0] = m0;
  o.p[1] = s0;
  for (int64_t i = 0; i < n; i++, kd_odo_step(&o))
    if (*(const uint8_t *)o.p[0]) {
      memcpy(r, o.p[1], es);
      r += es;
    }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* maskedSelectBackward(gradOutput, self, mask): zeros of the broadcast shape with gradOutput's
 * elements put, in order, where mask is true. */
KD_KERNEL(kd_cpu_masked_select_backward) {
  (void)op, (void)ks;
  kd_tensor *g = args[0].v.t, *self = args[1].v.t, *mask = args[2].v.t;
  kd_odo o = {0};
  KD_TRY(kd_mask_shape(self, mask, "masked_select_backward", o.shape, &o.nd));
  int64_t n = kd_shape_numel(o.shape, o.nd);
  kd_tensor *gc, *out;
  KD_TRY(kd_cpu_cast(g, g->dtype, true, &gc));
  kd_status st = kd_tensor_empty(o.shape, o.nd, g->dtype, kd_tensor_device(g), &out);
  if (st != KD_OK) { kd_tensor_release(gc); return st; }
  if (kd_tensor_device(g).type != KD_DEVICE_CPU) {
    kd_tensor *pos = NULL;
    int64_t count = 0;
    st = kd_mask_positions_dev(mask, o.shape, o.nd, &pos, &count);
    if (st == KD_OK && count > kd_tensor_numel(gc))
      st = kd_error(KD_ERR_SHAPE, "maskedSelectBackward: gradOutput has too few elements");
    if (st == KD_OK) {
      kd_iter_operand ops[3] = {kd_iter_operand_of(out), kd_iter_operand_of(mask), kd_iter_operand_of(pos)};
      st = kd_masked_dev_run(kd_tensor_device(g), 1, ops, g->dtype, kd_tensor_data(gc));
    }
    if (pos) kd_tensor_release(pos);
    kd_tensor_release(gc);
    if (st != KD_OK) { kd_tensor_release(out); return st; }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  size_t es = kd_dtype_size(g->dtype);
  char *r = kd_tensor_data(out);
  const char *src = kd_tensor_data(gc);
  int64_t gn = kd_tensor_numel(gc), used = 0;
  memset(r, 0, (size_t)n * es);
  kd_odo_add(&o, mask);
  for (int64_t i = 0; i < n; i++, kd_odo_step(&o))
    if (*(const uint8_t *)o.p[0]) {
      if (used >= gn) { st = kd_error(KD_ERR_SHAPE, "maskedSelectBackward: gradOutput has too few elements"); break; }
      memcpy(r + i * es, src + (used++) * es, es);
    }
  kd_tensor_release(gc);
  if (st != KD_OK) { kd_tensor_release(out); return st; }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_one_hot) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t;
  int64_t nc = args[1].kind == KD_VALUE_INT ? args[1].v.i : -1;
  if (self->dtype != KD_DTYPE_I64) return kd_error(KD_ERR_DTYPE, "one_hot is only applicable to index tensor.");
  kd_tensor *c;
  KD_TRY(kd_cpu_cast(self, KD_DTYPE_I64, true, &c));
  bool dev = kd_tensor_device(c).type != KD_DEVICE_CPU;
  const int64_t *v = (const int64_t *)kd_tensor_data(c);
  int64_t n = kd_tensor_numel(c);
  kd_status st = KD_OK;
  if (n == 0 && nc == -1) st = kd_error(KD_ERR_INVALID_ARGUMENT, "Can not infer total number of classes from empty tensor.");
  int64_t mn = 0, mx = -1;
  if (dev && n > 0) { /* the bounds through the device's min/max reductions */
    for (int k = 0; k < 2 && st == KD_OK; k++) {
      kd_value a[1] = {kd_value_tensor(c)};
      kd_tensor *r = NULL;
      kd_scalar sv;
      st = kd_call1(k ? KD_OP_max : KD_OP_min, a, &r);
      if (st == KD_OK) st = kd_cpu_item(r, &sv);
      if (r) kd_tensor_release(r);
      if (st == KD_OK) *(k ? &mx : &mn) = kd_scalar_to_int(sv);
    }
  }
  for (int64_t i = 0; !dev && i < n; i++) {
    if (i == 0 || v[i] < mn) mn = v[i];
    if (i == 0 || v[i] > mx) mx = v[i];
  }
  if (st == KD_OK && n > 0 && mn < 0) st = kd_error(KD_ERR_INVALID_ARGUMENT, "Class values must be non-negative.");
  if (st == KD_OK) {
    if (nc == -1) nc = mx + 1;
    else if (n > 0 && mx >= nc) st = kd_error(KD_ERR_INVALID_ARGUMENT, "Class values must be smaller than num_classes.");
  }
  if (st == KD_OK && self->ndim >= KD_MAX_DIMS) st = kd_error(KD_ERR_INVALID_ARGUMENT, "one_hot: too many dims");
  kd_tensor *out = NULL;
  if (st == KD_OK) {
    int64_t sizes[KD_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * self->ndim);
    sizes[self->ndim] = nc;
    st = kd_tensor_empty(sizes, self->ndim + 1, KD_DTYPE_I64, kd_tensor_device(self), &out);
  }
  if (st == KD_OK && dev) {
    kd_iter_operand o = kd_iter_operand_of(out);
    kd_iter it;
    st = kd_iter_build(&it, &o, 1, 1, 0);
    if (st == KD_OK && it.numel) {
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_ONE_HOT;
      d.dtype = KD_DTYPE_I64;
      d.it = &it;
      d.ops = &o;
      d.i[0] = nc;
      d.i[1] = (int64_t)(intptr_t)v;
      st = kd_cpu_device_run(kd_tensor_device(out), &d);
    }
    if (st != KD_OK) kd_tensor_release(out);
  } else if (st == KD_OK) {
    int64_t *r = (int64_t *)kd_tensor_data(out);
    memset(r, 0, sizeof(int64_t) * (size_t)(n * nc));
    for (int64_t i = 0; i < n; i++) r[i * nc + v[i]] = 1;
  }
  kd_tensor_release(c);
  KD_TRY(st);
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* nonzero of a device tensor, staged through the host: the result's size depends on the data, so
 * the device would have to sync anyway; the mask crosses once, the indices once. */
static kd_status kd_nonzero_staged(const kd_tensor *t, kd_tensor **out) {
  kd_tensor *h = NULL, *r = NULL, *d = NULL;
  kd_status st = kd_tensor_empty(t->sizes, t->ndim, t->dtype, kd_device_cpu(), &h);
  if (st == KD_OK) st = kd_cpu_copy_into(h, t);
  if (st == KD_OK) st = kd_cpu_nonzero_of(h, &r);
  if (st == KD_OK) st = kd_tensor_empty(r->sizes, r->ndim, KD_DTYPE_I64, kd_tensor_device(t), &d);
  if (st == KD_OK && kd_tensor_numel(r)) st = kd_cpu_copy_into(d, r);
  if (h) kd_tensor_release(h);
  if (r) kd_tensor_release(r);
  if (st != KD_OK) {
    if (d) kd_tensor_release(d);
    return st;
  }
  *out = d;
  return KD_OK;
}
