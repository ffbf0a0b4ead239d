/* multinomial.c - multinomial(self, numSamples, replacement): PyTorch's checks and messages, then
 * the draws of Note [Random distributions] in core/random.h on a float64 copy of the rows:
 * without replacement, the order of the keys Exp(1) / p by the device's stable sort (the first
 * numSamples); with replacement, a binary search of each draw in the row's running sums. The
 * row passes (check, keys, running sums, sampling) run here on the CPU or as one
 * KD_DEV_OP_MULTINOMIAL launch each on a device, with the same arithmetic. */
#include "cpu/device_op.h"
#include "cpu/random_dist.h"

typedef struct kd_mn_pass {
  int code;
  int64_t rows, cats, samples;
  uint64_t seed, offset;
  double *probs;  /* [rows, cats] float64, contiguous (rewritten by KEYS and CDF) */
  int64_t *out;   /* SAMPLE: [rows, samples] */
  int64_t result[2];
} kd_mn_pass;

static void kd_mn_cpu(kd_mn_pass *m) {
  const int64_t C = m->cats;
  for (int64_t r = 0; r < m->rows; r++) {
    double *row = m->probs + r * C;
    switch (m->code) {
      case KD_MULTINOMIAL_CHECK: {
        double sum = 0;
        for (int64_t c = 0; c < C; c++) {
          const double v = row[c];
          if (!m->result[0] && !(v >= 0)) m->result[0] = 1;
          else if (!m->result[0] && !isfinite(v)) m->result[0] = 2;
          sum += v;
        }
        if (!(sum > 0)) m->result[1] = 1;
        break;
      }
      case KD_MULTINOMIAL_KEYS:
        for (int64_t c = 0; c < C; c++) row[c] = kd_random_multinomial_key(m->seed, m->offset, (uint64_t)(r * C + c), row[c]);
        break;
      case KD_MULTINOMIAL_CDF: {
        double sum = 0;
        for (int64_t c = 0; c < C; c++) row[c] = sum += row[c];
        break;
      }
      case KD_MULTINOMIAL_SAMPLE:
        for (int64_t s = 0; s < m->samples; s++) {
          const uint64_t e = (uint64_t)(r * m->samples + s);
          m->out[r * m->samples + s] = kd_random_multinomial_pick(row, C, kd_random_uniform_f64(m->seed, m->offset, e));
        }
        break;
      default: break;
    }
  }
}

static kd_status kd_mn_run(kd_device dev, kd_mn_pass *m) {
  m->result[0] = m->result[1] = 0;
  if (dev.type == KD_DEVICE_CPU) {
    kd_mn_cpu(m);
    return KD_OK;
  }
  kd_dev_op d;
  memset(&d, 0, sizeof d);
  d.kind = KD_DEV_OP_MULTINOMIAL;
  d.code = m->code;
  d.dtype = KD_DTYPE_F64;
  d.data = m->code == KD_MULTINOMIAL_SAMPLE ? (void *)m->out : (void *)m->probs;
  d.numel = m->code == KD_MULTINOMIAL_SAMPLE ? m->rows * m->samples : m->rows * m->cats;
  d.i[0] = m->rows;
  d.i[1] = m->cats;
  d.i[2] = (int64_t)m->seed;
  d.i[3] = (int64_t)m->offset;
  d.i[4] = (int64_t)(intptr_t)m->probs;
  d.i[5] = m->samples;
  KD_TRY(kd_cpu_device_run(dev, &d));
  m->result[0] = d.result[0];
  m->result[1] = d.result[1];
  return KD_OK;
}

/* Without replacement: the stable ascending order of the keys along the last dim, first S. */
static kd_status kd_mn_first_by_key(kd_tensor *keys, int64_t S, kd_tensor **out) {
  kd_value o[KD_OP_MAX_OUTS];
  kd_value a[4] = {kd_value_tensor(keys), kd_value_int(-1), kd_value_bool(false), kd_value_bool(true)};
  KD_TRY(kd_call(KD_OP_sort, a, o));
  kd_tensor *first = NULL;
  kd_value n[4] = {o[1], kd_value_int(-1), kd_value_int(0), kd_value_int(S)};
  kd_status st = kd_call1(KD_OP_narrow, n, &first);
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  KD_TRY(st);
  kd_value c[1] = {kd_value_tensor(first)};
  st = kd_call1(KD_OP_contiguous, c, out);
  kd_tensor_release(first);
  return st;
}

KD_KERNEL(kd_random_multinomial) {
  (void)ks;
  kd_tensor *self = args[0].v.t;
  const int64_t S = args[1].v.i;
  const bool repl = args[2].v.b;
  if (self->ndim < 1 || self->ndim > 2) return kd_error(KD_ERR_INVALID_ARGUMENT, "prob_dist must be 1 or 2 dim");
  if (!kd_dtype_is_float(self->dtype))
    return kd_error(KD_ERR_DTYPE, "multinomial only supports floating-point dtypes for input, got: %s", kd_cpu_torch_name(self->dtype));
  if (S <= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot sample n_sample <= 0 samples");
  const int64_t C = self->sizes[self->ndim - 1], rows = self->ndim == 2 ? self->sizes[0] : 1;
  if (!repl && S > C)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  if (C > (1 << 24)) return kd_error(KD_ERR_INVALID_ARGUMENT, "number of categories cannot exceed 2^24");
  const kd_device dev = kd_tensor_device(self);
  int64_t oshape[2] = {rows, S};
  if (rows == 0) {
    kd_tensor *out = NULL;
    KD_TRY(kd_tensor_empty(self->ndim == 2 ? oshape : oshape + 1, self->ndim, KD_DTYPE_I64, dev, &out));
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  kd_tensor *probs = NULL;
  KD_TRY(kd_random_f64_copy(self, &probs));
  kd_mn_pass m;
  memset(&m, 0, sizeof m);
  m.rows = rows;
  m.cats = C;
  m.samples = S;
  m.probs = (double *)kd_tensor_data(probs);
  m.code = KD_MULTINOMIAL_CHECK;
  kd_status st = C > 0 ? kd_mn_run(dev, &m) : KD_OK;
  if (C == 0) m.result[1] = 1;
  if (st == KD_OK && m.result[0]) {
    st = !repl || S == 1 ? kd_error(KD_ERR_INVALID_ARGUMENT, "probability tensor contains either `inf`, `nan` or element < 0")
         : m.result[0] == 1 ? kd_error(KD_ERR_INVALID_ARGUMENT, "invalid multinomial distribution (encountering probability entry < 0)")
                            : kd_error(KD_ERR_INVALID_ARGUMENT, "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  } else if (st == KD_OK && m.result[1]) {
    st = kd_error(KD_ERR_INVALID_ARGUMENT, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  kd_tensor *out = NULL;
  if (st == KD_OK) {
    m.offset = kd_random_next_offset(&m.seed);
    if (!repl) {
      m.code = KD_MULTINOMIAL_KEYS;
      st = kd_mn_run(dev, &m);
      if (st == KD_OK) st = kd_mn_first_by_key(probs, S, &out);
    } else {
      m.code = KD_MULTINOMIAL_CDF;
      st = kd_mn_run(dev, &m);
      if (st == KD_OK) st = kd_tensor_empty(self->ndim == 2 ? oshape : oshape + 1, self->ndim, KD_DTYPE_I64, dev, &out);
      if (st == KD_OK) {
        m.code = KD_MULTINOMIAL_SAMPLE;
        m.out = (int64_t *)kd_tensor_data(out);
        st = kd_mn_run(dev, &m);
      }
    }
  }
  kd_tensor_release(probs);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
