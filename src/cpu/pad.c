/* pad.c - CPU kernel of pad (modes 'constant', 'reflect', 'replicate', 'circular') and padBackward,
 * selected by op->code. pad = [left, right, top, bottom, front, back] pads the last dims,
 * last dim first (PyTorch's order).
 *   constant   out = fill(value), then the overlapping window of the input is copied in with
 *              kd_cpu_copy_into (the strided iterator: any strides, every dtype; negative pads
 *              crop). Its backward copies the window back.
 *   reflect / replicate / circular  an index map per padded dim (source position of every output
 *              position); the input is made contiguous and elements are gathered by size
 *              (every dtype), in parallel over the leading (N, C) rows. Their backward adds
 *              each output gradient to its source (compute dtype float32/float64).
 * On a device: the constant mode is the device's fill/copy_ (the fill value is a host 0-d tensor),
 * reflect/replicate hand the same geometry to KD_DEV_OP_PAD (cuda/ops_pad.cu).
 * Checks and messages follow PyTorch 1.13 (torch._C._nn.pad, reflection/replication_pad). */
#include <stdio.h>

#include "cpu/nn_common.h"
#include "cpu/device_op.h"

typedef struct kd_pad_job {
  int k;                      /* padded dims (the last k) */
  int64_t outer;              /* product of the other dims */
  int64_t in[3], out[3];      /* padded dims' sizes, outermost first */
  const int64_t *map[3];      /* source index of each output position, per padded dim */
  size_t es;
  bool backward, f64;
  const char *src;
  char *dst;
} kd_pad_job;

/* Circular padding wraps the input left after its negative pads crop it: its size. */
static int64_t kd_pad_circular_size(int64_t lo, int64_t hi, int64_t in) {
  return in - (lo < 0 ? -lo : 0) - (hi < 0 ? -hi : 0);
}

static void kd_pad_chunk(void *ctx, int64_t r0, int64_t r1) {
  const kd_pad_job *j = (const kd_pad_job *)ctx;
  int64_t in1 = 1, out1 = 1;
  for (int d = 0; d < j->k; d++) { in1 *= j->in[d]; out1 *= j->out[d]; }
  /* pad the dims to 3 (leading size-1 dims) */
  int64_t is[3] = {1, 1, 1}, os[3] = {1, 1, 1};
  const int64_t *m[3];
  static const int64_t zero = 0;
  for (int d = 0; d < 3; d++) m[d] = &zero;
  for (int d = 0; d < j->k; d++) { is[3 - j->k + d] = j->in[d]; os[3 - j->k + d] = j->out[d]; m[3 - j->k + d] = j->map[d]; }
  for (int64_t r = r0; r < r1; r++) {
    for (int64_t a = 0; a < os[0]; a++)
      for (int64_t b = 0; b < os[1]; b++) {
        int64_t srow = r * in1 + (m[0][a] * is[1] + m[1][b]) * is[2];
        int64_t drow = r * out1 + (a * os[1] + b) * os[2];
        const int64_t *mc = m[2];
        if (!j->backward) {
          switch (j->es) {
            case 1: { const uint8_t *s = (const uint8_t *)j->src + srow; uint8_t *o = (uint8_t *)j->dst + drow; for (int64_t c = 0; c < os[2]; c++) o[c] = s[mc[c]]; break; }
            case 2: { const uint16_t *s = (const uint16_t *)j->src + srow; uint16_t *o = (uint16_t *)j->dst + drow; for (int64_t c = 0; c < os[2]; c++) o[c] = s[mc[c]]; break; }
            case 4: { const uint32_t *s = (const uint32_t *)j->src + srow; uint32_t *o = (uint32_t *)j->dst + drow; for (int64_t c = 0; c < os[2]; c++) o[c] = s[mc[c]]; break; }
            default: { const uint64_t *s = (const uint64_t *)j->src + srow; uint64_t *o = (uint64_t *)j->dst + drow; for (int64_t c = 0; c < os[2]; c++) o[c] = s[mc[c]]; break; }
          }
        } else if (j->f64) { /* src: gradOutput rows (drow), dst: gradInput (srow) */
          const double *g = (const double *)j->src + drow; double *o = (double *)j->dst + srow;
          for (int64_t c = 0; c < os[2]; c++) o[mc[c]] += g[c];
        } else {
          const float *g = (const float *)j->src + drow; float *o = (float *)j->dst + srow;
          for (int64_t c = 0; c < os[2]; c++) o[mc[c]] += g[c];
        }
      }
  }
}

static const char *kd_pad_list(char *buf, size_t cap, const int64_t *s, int n) {
  size_t p = 0;
  p += (size_t)snprintf(buf + p, cap - p, "[");
  for (int i = 0; i < n && p < cap; i++) p += (size_t)snprintf(buf + p, cap - p, i ? ", %lld" : "%lld", (long long)s[i]);
  if (p < cap) snprintf(buf + p, cap - p, "]");
  return buf;
}

/* A view of t: dims [nd - k, nd) narrowed to [start[d], start[d] + len[d]). An empty window
 * stays at t's offset (its start may lie far outside t: the strides of an empty tensor of huge
 * sizes wrap, Note [Checked shape arithmetic]). */
static kd_status kd_pad_window(const kd_tensor *t, int k, const int64_t *start, const int64_t *len, kd_tensor **out) {
  int64_t sizes[KD_MAX_DIMS];
  int64_t off = t->offset;
  bool empty = false;
  const int lead = t->ndim - k; /* k <= ndim (checked by the caller) */
  for (int i = 0; i < t->ndim; i++) sizes[i] = i < lead ? t->sizes[i] : len[i - lead];
  for (int i = 0; i < t->ndim; i++) empty = empty || sizes[i] == 0;
  for (int i = lead; i < t->ndim && !empty; i++) {
    int64_t step;
    if (kd_mul_overflows(start[i - lead], t->strides[i], &step) || kd_add_overflows(off, step, &off))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "pad: the offset of the copied window overflows int64");
  }
  return kd_tensor_new_view(t, sizes, t->strides, t->ndim, empty ? t->offset : off, out);
}

/* o (any device) filled with value. */
static kd_status kd_pad_fill(kd_tensor *o, double value) {
  if (kd_tensor_numel(o) == 0) return KD_OK;
  kd_tensor *fill;
  KD_TRY(kd_tensor_empty(NULL, 0, KD_DTYPE_F64, kd_device_cpu(), &fill)); /* a host value: copy_ broadcasts it */
  *(double *)kd_tensor_data(fill) = value;
  kd_status st = kd_cpu_copy_into(o, fill);
  kd_tensor_release(fill);
  return st;
}

static kd_status kd_pad_impl(const kd_op_info *op, kd_value *args, kd_tensor **tmp, int *ntmp, kd_tensor **result) {
  char b1[96];
  bool bwd = op->code == KD_PAD_BACKWARD;
  kd_tensor *src = args[0].v.t;
  const int64_t *xs;
  int xd;
  if (bwd) {
    xs = args[1].v.ilist.data;
    xd = args[1].v.ilist.n;
  } else {
    xs = src->sizes;
    xd = src->ndim;
  }
  if (xd > KD_MAX_DIMS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "padBackward: inputSize has %d dims; tensors have at most %d", xd, KD_MAX_DIMS);
  const int64_t *pad = args[bwd ? 2 : 1].v.ilist.data;
  int np = args[bwd ? 2 : 1].v.ilist.n;
  const char *mode = args[bwd ? 3 : 2].v.str;
  bool constant = strcmp(mode, "constant") == 0, reflect = strcmp(mode, "reflect") == 0,
       replicate = strcmp(mode, "replicate") == 0, circular = strcmp(mode, "circular") == 0;
  if (!constant && !reflect && !replicate && !circular)
    return kd_error(KD_ERR_NOT_SUPPORTED, "Unrecognised padding mode %s", mode);
  if (np % 2 != 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "Padding length must be divisible by 2");
  int k = np / 2;
  if (k > xd) return kd_error(KD_ERR_INVALID_ARGUMENT, "Padding length too large");
  if (!bwd && !constant && args[3].kind == KD_VALUE_DOUBLE)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Padding mode \"%s\" doesn't take in value argument", mode);
  if (!constant) {
    if (k > 3 || xd < k + 1 || xd > k + 2)
      return kd_error(KD_ERR_NOT_SUPPORTED, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  }
  /* per padded dim, outermost first: lo/hi padding, input and output sizes */
  int64_t lo[KD_MAX_DIMS] = {0}, hi[KD_MAX_DIMS] = {0}, in[KD_MAX_DIMS] = {0}, out[KD_MAX_DIMS] = {0};
  int64_t os[KD_MAX_DIMS];
  for (int i = 0; i < xd; i++) os[i] = xs[i];
  for (int d = 0; d < k; d++) {
    int dim = xd - k + d, pi = 2 * (k - 1 - d);
    lo[d] = pad[pi];
    hi[d] = pad[pi + 1];
    in[d] = xs[dim];
    if (lo[d] == INT64_MIN || hi[d] == INT64_MIN || kd_add_overflows(in[d], lo[d], &out[d]) ||
        kd_add_overflows(out[d], hi[d], &out[d]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "pad: the padded size of dimension %d overflows int64 (input size %lld, "
                      "padding (%lld, %lld))", dim, (long long)in[d], (long long)lo[d], (long long)hi[d]);
    if (reflect && (lo[d] >= in[d] || hi[d] >= in[d]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Argument #%d: Padding size should be less than the corresponding input dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                      4 + pi, (long long)lo[d], (long long)hi[d], dim, kd_pad_list(b1, sizeof b1, xs, xd)); /* PyTorch numbers the pad's arguments */
    if (circular && (lo[d] > in[d] || hi[d] > in[d]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Padding value causes wrapping around more than once.");
    if (circular && (out[d] < 0 || (out[d] > 0 && kd_pad_circular_size(lo[d], hi[d], in[d]) <= 0)))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Negative padding value is resulting in an empty dimension.");
    if (!constant && !circular && (lo[d] < 0 || hi[d] < 0))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "pad: negative padding is only supported in 'constant' and 'circular' modes");
    if (replicate && in[d] == 0 && out[d] > 0)
      return kd_error(KD_ERR_SHAPE, "input tensor must have non-zero size in the padded dimensions for replicate padding");
    if (out[d] < 0)
      return kd_error(KD_ERR_SHAPE, "The input size %lld, plus negative padding %lld and %lld resulted in a negative output size, which is invalid. Check dimension %d of your input.",
                      (long long)in[d], (long long)lo[d], (long long)hi[d], dim);
    os[dim] = out[d];
  }
  int64_t onumel;
  if (kd_shape_numel_checked(os, xd, &onumel) != KD_OK)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "pad: the padded size %s has more elements than fit in int64",
                    kd_pad_list(b1, sizeof b1, os, xd));
  if (bwd) {
    bool ok = src->ndim == xd;
    for (int i = 0; ok && i < xd; i++) ok = src->sizes[i] == os[i];
    if (!ok) return kd_error(KD_ERR_SHAPE, "padBackward: gradOutput of size %s does not match the padded size",
                             kd_pad_list(b1, sizeof b1, src->sizes, src->ndim));
  }
  kd_device dev = kd_tensor_device(src);
  if (constant) {
    /* the window both tensors share: in the input from max(-lo, 0), in the output from max(lo, 0) */
    int64_t istart[KD_MAX_DIMS], ostart[KD_MAX_DIMS], len[KD_MAX_DIMS];
    for (int d = 0; d < k; d++) {
      istart[d] = lo[d] < 0 ? -lo[d] : 0;
      ostart[d] = lo[d] > 0 ? lo[d] : 0;
      len[d] = in[d] - istart[d] - (hi[d] < 0 ? -hi[d] : 0);
      if (len[d] < 0) len[d] = 0;
    }
    kd_tensor *o, *wo, *wi;
    KD_TRY(kd_tensor_empty(bwd ? xs : os, xd, src->dtype, dev, &o));
    tmp[(*ntmp)++] = o;
    KD_TRY(kd_pad_fill(o, !bwd && args[3].kind == KD_VALUE_DOUBLE ? args[3].v.d : 0.0));
    /* forward: out[ostart..] = in[istart..]; backward: gin[istart..] = gout[ostart..] */
    KD_TRY(kd_pad_window(o, k, bwd ? istart : ostart, len, &wo));
    tmp[(*ntmp)++] = wo;
    KD_TRY(kd_pad_window(src, k, bwd ? ostart : istart, len, &wi));
    tmp[(*ntmp)++] = wi;
    KD_TRY(kd_cpu_copy_into(wo, wi));
    kd_tensor_retain(o);
    *result = o;
    return KD_OK;
  }
  if (onumel == 0 || kd_tensor_numel(src) == 0) { /* nothing to gather or scatter: an empty result (zeros: backward) */
    kd_tensor *o;
    KD_TRY(kd_tensor_empty(bwd ? xs : os, xd, src->dtype, dev, &o));
    tmp[(*ntmp)++] = o;
    if (bwd) KD_TRY(kd_pad_fill(o, 0.0));
    kd_tensor_retain(o);
    *result = o;
    return KD_OK;
  }
  kd_pad_job j;
  memset(&j, 0, sizeof j);
  j.k = k;
  j.outer = 1;
  for (int i = 0; i < xd - k; i++) j.outer *= xs[i];
  int64_t maplen = 1, mapbytes = 0; /* one source index per output position of each padded dim (+1: never 0 bytes) */
  bool toobig = false;
  for (int d = 0; d < k; d++) {
    j.in[d] = in[d];
    j.out[d] = out[d];
    toobig = toobig || kd_add_overflows(maplen, out[d], &maplen);
  }
  toobig = toobig || kd_mul_overflows(maplen, (int64_t)sizeof(int64_t), &mapbytes) || (uint64_t)mapbytes > SIZE_MAX;
  int64_t *maps = toobig ? NULL : (int64_t *)malloc((size_t)mapbytes);
  if (!maps) return kd_error(KD_ERR_OOM, "out of host memory in pad (index maps of %lld positions)", (long long)maplen);
  int64_t pos = 0;
  for (int d = 0; d < k; d++) {
    int64_t *m = maps + pos;
    for (int64_t o = 0; o < out[d]; o++) {
      int64_t i = o - lo[d];
      if (reflect) {
        if (i < 0) i = -i;
        if (i >= in[d]) i = 2 * (in[d] - 1) - i;
      } else if (circular) { /* PyTorch crops the negative pads first, then wraps what is left */
        int64_t c = kd_pad_circular_size(lo[d], hi[d], in[d]), pl = lo[d] > 0 ? lo[d] : 0;
        i = (((o - pl) % c) + c) % c + (lo[d] < 0 ? -lo[d] : 0);
      } else {
        if (i < 0) i = 0;
        if (i >= in[d]) i = in[d] - 1;
      }
      m[o] = i;
    }
    j.map[d] = m;
    pos += out[d];
  }
  kd_tensor *sc, *o;
  kd_status st;
  if (bwd) {
    kd_dtype cdt = KD_DTYPE_F32;
    st = kd_nn_compute_dtype(src->dtype, reflect ? "reflection_pad_backward" : "replication_pad_backward", &cdt);
    if (st == KD_OK) st = kd_nn_prep(src, cdt, &sc);
    if (st != KD_OK) { free(maps); return st; }
    tmp[(*ntmp)++] = sc;
    st = kd_tensor_empty(xs, xd, cdt, dev, &o);
    if (st != KD_OK) { free(maps); return st; }
    tmp[(*ntmp)++] = o;
    if (dev.type == KD_DEVICE_CPU) memset(kd_tensor_data(o), 0, (size_t)kd_tensor_numel(o) * kd_dtype_size(cdt));
    j.f64 = cdt == KD_DTYPE_F64;
  } else {
    if ((replicate && src->dtype == KD_DTYPE_BOOL) || (reflect && src->dtype != KD_DTYPE_F32 && src->dtype != KD_DTYPE_F64 &&
                                        src->dtype != KD_DTYPE_F16 && src->dtype != KD_DTYPE_BF16)) {
      /* PyTorch 1.13 has reflection pads for floating types, replication pads for all but bool,
       * circular pads (slices and cat) for every dtype */
      free(maps);
      return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s_pad%dd\" not implemented for '%s'", reflect ? "reflection" : "replication",
                      k, kd_cpu_torch_name(src->dtype));
    }
    st = kd_cpu_cast(src, src->dtype, true, &sc);
    if (st != KD_OK) { free(maps); return st; }
    tmp[(*ntmp)++] = sc;
    st = kd_tensor_empty(os, xd, src->dtype, dev, &o);
    if (st != KD_OK) { free(maps); return st; }
    tmp[(*ntmp)++] = o;
  }
  j.es = kd_dtype_size(src->dtype);
  j.backward = bwd;
  j.src = kd_tensor_data(sc);
  j.dst = kd_tensor_data(o);
  int64_t per = 1;
  for (int d = 0; d < k; d++) per *= out[d];
  if (dev.type != KD_DEVICE_CPU) { /* cuda/ops_pad.cu: the same source positions, per element */
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_PAD;
    d.code = bwd;
    d.dtype = o->dtype;
    d.data = j.dst;
    d.numel = j.outer * per;
    d.i[0] = (int64_t)(intptr_t)j.src;
    d.i[1] = k;
    d.i[2] = reflect ? 0 : circular ? 2 : 1; /* the mode */
    d.i[3] = bwd ? (int64_t)j.f64 : (int64_t)j.es;
    d.i[4] = j.outer;
    for (int q = 0; q < k; q++) {
      d.d[q] = (double)in[q];
      d.d[3 + q] = (double)out[q];
      d.d[6 + q] = (double)lo[q];
      if (circular) { /* the cropped size and where it starts in the input */
        d.i[5 + q] = kd_pad_circular_size(lo[q], hi[q], in[q]);
        d.d[9 + q] = (double)(lo[q] < 0 ? -lo[q] : 0);
      }
    }
    st = kd_cpu_device_run(dev, &d);
    free(maps);
    if (st != KD_OK) return st;
    kd_tensor_retain(o);
    if (bwd) return kd_nn_finish(o, src->dtype, result);
    *result = o;
    return KD_OK;
  }
  int64_t grain = KD_PARALLEL_GRAIN / (per > 0 ? per : 1);
  if (j.outer > 0 && per > 0) kd_parallel_for(0, j.outer, grain < 1 ? 1 : grain, kd_pad_chunk, &j);
  free(maps);
  kd_tensor_retain(o);
  if (bwd) return kd_nn_finish(o, src->dtype, result);
  *result = o;
  return KD_OK;
}

KD_KERNEL(kd_cpu_pad) {
  (void)ks;
  kd_tensor *tmp[8];
  int ntmp = 0;
  kd_tensor *r = NULL;
  kd_status st = kd_pad_impl(op, args, tmp, &ntmp, &r);
  for (int i = 0; i < ntmp; i++) kd_tensor_release(tmp[i]);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}
