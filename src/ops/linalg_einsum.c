/* linalg_einsum.c - torch.einsum as a composite (every device; autograd through the ops it
 * calls), the way PyTorch's Linear.cpp does it:
 *  1. parse the equation: letters A-Z (labels 0..25), a-z (26..51), '...' (one label per
 *     broadcast dim, 52.., right-aligned across operands); the output is given after '->' or
 *     implicit (ellipsis dims, then the labels seen once, uppercase first);
 *  2. every operand becomes a view of rank L (all labels; the output labels first, then the
 *     summed ones in label order) with size 1 where it lacks a label: repeated labels within an
 *     operand become a diagonal view, then permute + reshape (no copies);
 *  3. a label that is in no output and in no other operand is summed at once (keepdim);
 *  4. operands are contracted left to right: with labels kept for later (batch in both, or only
 *     in one side) and labels to sum in both (contracted), each pair is permute + reshape to
 *     [batch, m, k] @ [batch, k, n] and ONE bmm (BLAS; transposed layouts go through in place),
 *     or a broadcast mul when nothing is contracted;
 *  5. the rank-L result is reshaped to the output (the summed dims are size 1 by then).
 * At most KD_MAX_DIMS distinct labels in one equation. */
#include <stdio.h>
#include <string.h>

#include "ops/shape_scope.h"

#define EIN_ELL 52               /* label of the first ellipsis dim */
#define EIN_NLABELS (52 + KD_MAX_DIMS)
#define EIN_TOK_ELL (-2)

static int ein_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
static char ein_char(int l) { return l < 26 ? (char)('A' + l) : l < 52 ? (char)('a' + l - 26) : '.'; }

typedef struct ein_term {
  int tok[KD_MAX_DIMS + 1]; /* labels, or EIN_TOK_ELL once */
  int ntok;
  bool has_ell;
} ein_term;

/* Parses one term ending at `end`; `base` is the term's index in the equation string. */
static kd_status ein_parse_term(const char *eq, int begin, int end, ein_term *t) {
  t->ntok = 0;
  t->has_ell = false;
  for (int i = begin; i < end; i++) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (t->has_ell || i + 2 >= end + 0 || eq[i + 1] != '.' || eq[i + 2] != '.')
        return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): found '.' for operand that is not part of any ellipsis");
      t->has_ell = true;
      if (t->ntok > KD_MAX_DIMS) break;
      t->tok[t->ntok++] = EIN_TOK_ELL;
      i += 2;
      continue;
    }
    int l = ein_label(c);
    if (l < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): invalid subscript given at index %d in the equation string, "
                      "subscripts must be in [a-zA-Z]", i);
    if (t->ntok > KD_MAX_DIMS)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): at most %d subscripts per operand", KD_MAX_DIMS);
    t->tok[t->ntok++] = l;
  }
  return KD_OK;
}

static kd_status ein_sum_keep(kd_scope *s, kd_tensor *t, int64_t d, kd_tensor **out) {
  kd_value v[4] = {kd_value_tensor(t), kd_value_intlist(&d, 1), kd_value_bool(true), kd_value_none()};
  return kd_scope_call(s, KD_OP_sum, v, out);
}
static kd_status ein_shape(kd_scope *s, kd_op_id op, kd_tensor *t, const int64_t *shape, int n, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value v[2] = {kd_value_tensor(t), kd_value_intlist(n ? shape : none, n)};
  return kd_scope_call(s, op, v, out);
}

static kd_status ein_impl(kd_scope *s, const char *eq, kd_tensor **ts, int nt, kd_tensor **result) {
  if (nt == 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): must specify the equation string and at least one operand, or "
                    "at least one operand and its subscripts list");
  int len = (int)strlen(eq);
  const char *arrow = strstr(eq, "->");
  int lhs_end = arrow ? (int)(arrow - eq) : len;
  /* 1. terms */
  ein_term *terms = (ein_term *)calloc((size_t)nt, sizeof(ein_term));
  if (!terms) return kd_error(KD_ERR_OOM, "out of host memory");
  kd_status st = KD_OK;
  int nterm = 0, start = 0;
  for (int i = 0; i <= lhs_end && st == KD_OK; i++) {
    if (i < lhs_end && eq[i] != ',') continue;
    if (nterm >= nt) {
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): fewer operands were provided than specified in the equation");
      break;
    }
    st = ein_parse_term(eq, start, i, &terms[nterm++]);
    start = i + 1;
  }
  if (st == KD_OK && nterm < nt)
    st = kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): more operands were provided than specified in the equation");
  /* dims of each operand -> labels */
  int dlab[64][KD_MAX_DIMS];
  int max_ell = 0;
  if (st == KD_OK && nt > 64) st = kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): at most 64 operands are supported");
  for (int i = 0; i < nt && st == KD_OK; i++) {
    int nl = terms[i].ntok - (terms[i].has_ell ? 1 : 0), nd = ts[i]->ndim;
    if (!terms[i].has_ell && nl != nd)
      st = kd_error(KD_ERR_SHAPE, "einsum(): the number of subscripts in the equation (%d) does not match the number "
                    "of dimensions (%d) for operand %d and no ellipsis was given", nl, nd, i);
    else if (terms[i].has_ell && nl > nd)
      st = kd_error(KD_ERR_SHAPE, "einsum(): the number of subscripts in the equation (%d) is more than the number of "
                    "dimensions (%d) for operand %d", nl, nd, i);
    else if (terms[i].has_ell && nd - nl > max_ell)
      max_ell = nd - nl;
  }
  for (int i = 0; i < nt && st == KD_OK; i++) {
    int nl = terms[i].ntok - (terms[i].has_ell ? 1 : 0), ne = ts[i]->ndim - nl, d = 0;
    for (int k = 0; k < terms[i].ntok; k++) {
      if (terms[i].tok[k] == EIN_TOK_ELL)
        for (int e = 0; e < ne; e++) dlab[i][d++] = EIN_ELL + (max_ell - ne) + e;
      else
        dlab[i][d++] = terms[i].tok[k];
    }
  }
  free(terms);
  KD_TRY(st);
  /* label sizes (broadcast) and counts */
  int64_t lsize[EIN_NLABELS];
  int count[EIN_NLABELS] = {0}, owner[EIN_NLABELS];
  for (int l = 0; l < EIN_NLABELS; l++) lsize[l] = 1, owner[l] = -1;
  bool seen_size[EIN_NLABELS] = {false};
  for (int i = 0; i < nt; i++) {
    bool in_op[EIN_NLABELS] = {false};
    for (int d = 0; d < ts[i]->ndim; d++) {
      int l = dlab[i][d];
      int64_t sz = ts[i]->sizes[d];
      count[l]++;
      if (in_op[l]) {
        for (int e = 0; e < d; e++)
          if (dlab[i][e] == l && ts[i]->sizes[e] != sz)
            return kd_error(KD_ERR_SHAPE, "einsum(): subscript %c is repeated for operand %d but the sizes don't match, "
                            "%lld != %lld", ein_char(l), i, (long long)sz, (long long)ts[i]->sizes[e]);
        continue;
      }
      in_op[l] = true;
      owner[l] = owner[l] == -1 ? i : -2; /* -2: in several operands */
      if (l >= EIN_ELL) { /* ellipsis dims broadcast */
        if (sz != 1 && lsize[l] != 1 && lsize[l] != sz)
          return kd_error(KD_ERR_SHAPE, "einsum(): operands do not broadcast with remapped shapes");
        if (sz != 1) lsize[l] = sz;
        continue;
      }
      if (seen_size[l] && sz != lsize[l] && sz != 1 && lsize[l] != 1)
        return kd_error(KD_ERR_SHAPE, "einsum(): subscript %c has size %lld for operand %d which does not broadcast "
                        "with previously seen size %lld", ein_char(l), (long long)sz, i, (long long)lsize[l]);
      if (!seen_size[l] || lsize[l] == 1) lsize[l] = sz;
      seen_size[l] = true;
    }
  }
  /* output labels */
  int out[EIN_NLABELS], nout = 0;
  bool is_out[EIN_NLABELS] = {false};
  if (arrow) {
    bool ell_done = false;
    for (int i = lhs_end + 2; i < len; i++) {
      char c = eq[i];
      if (c == ' ') continue;
      if (c == '.') {
        if (ell_done || i + 2 >= len || eq[i + 1] != '.' || eq[i + 2] != '.')
          return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): found '.' for output that is not part of any ellipsis");
        ell_done = true;
        for (int e = 0; e < max_ell; e++) {
          out[nout++] = EIN_ELL + e;
          is_out[EIN_ELL + e] = true;
        }
        i += 2;
        continue;
      }
      int l = ein_label(c);
      if (l < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): invalid subscript given at index %d in the equation string, "
                        "subscripts must be in [a-zA-Z]", i);
      if (count[l] == 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): output subscript %c does not appear in the equation for any "
                        "input operand", c);
      if (is_out[l])
        return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): output subscript %c appears more than once in the output", c);
      if (nout >= KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): at most %d output dims", KD_MAX_DIMS);
      is_out[l] = true;
      out[nout++] = l;
    }
  } else {
    for (int e = 0; e < max_ell; e++) {
      out[nout++] = EIN_ELL + e;
      is_out[EIN_ELL + e] = true;
    }
    for (int l = 0; l < EIN_ELL; l++)
      if (count[l] == 1) {
        out[nout++] = l;
        is_out[l] = true;
      }
  }
  /* total order: output labels, then the summed ones */
  int pos[EIN_NLABELS], order[EIN_NLABELS], L = 0;
  for (int i = 0; i < nout; i++) order[L++] = out[i];
  for (int l = 0; l < EIN_NLABELS; l++)
    if (count[l] > 0 && !is_out[l]) order[L++] = l;
  if (L > KD_MAX_DIMS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "einsum(): at most %d distinct subscripts are supported", KD_MAX_DIMS);
  for (int l = 0; l < EIN_NLABELS; l++) pos[l] = -1;
  for (int i = 0; i < L; i++) pos[order[i]] = i;

  /* 2./3. every operand as a rank-L view */
  kd_tensor *full[64];
  for (int i = 0; i < nt; i++) {
    kd_tensor *cur = ts[i];
    int lab[KD_MAX_DIMS], n = cur->ndim;
    memcpy(lab, dlab[i], sizeof(int) * n);
    for (bool again = true; again;) { /* repeated labels -> diagonal (appended last) */
      again = false;
      for (int a = 0; a < n && !again; a++)
        for (int b = a + 1; b < n && !again; b++) {
          if (lab[a] != lab[b]) continue;
          kd_value v[4] = {kd_value_tensor(cur), kd_value_int(0), kd_value_int(a), kd_value_int(b)};
          KD_TRY(kd_scope_call(s, KD_OP_diagonal, v, &cur));
          int l = lab[a], m = 0;
          for (int k = 0; k < n; k++)
            if (k != a && k != b) lab[m++] = lab[k];
          lab[m++] = l;
          n = m;
          again = true;
        }
    }
    int64_t perm[KD_MAX_DIMS], shape[KD_MAX_DIMS];
    int np = 0;
    for (int p = 0; p < L; p++) {
      shape[p] = 1;
      for (int k = 0; k < n; k++)
        if (pos[lab[k]] == p) {
          perm[np++] = k;
          shape[p] = cur->sizes[k];
        }
    }
    KD_TRY(ein_shape(s, KD_OP_permute, cur, perm, n, &cur));
    KD_TRY(ein_shape(s, KD_OP_reshape, cur, shape, L, &cur));
    for (int k = 0; k < n; k++) { /* summed labels of this operand alone */
      int l = lab[k];
      if (!is_out[l] && owner[l] == i && cur->sizes[pos[l]] != 1) KD_TRY(ein_sum_keep(s, cur, pos[l], &cur));
    }
    full[i] = cur;
  }

  /* 4. contract left to right */
  kd_tensor *r = full[0];
  for (int i = 1; i < nt; i++) {
    kd_tensor *a = r, *b = full[i];
    bool later[KD_MAX_DIMS] = {false};
    for (int j = i + 1; j < nt; j++)
      for (int d = 0; d < ts[j]->ndim; d++) later[pos[dlab[j][d]]] = true;
    int batch[KD_MAX_DIMS], aonly[KD_MAX_DIMS], bonly[KD_MAX_DIMS], contr[KD_MAX_DIMS], rest[KD_MAX_DIMS];
    int nb = 0, na = 0, nbo = 0, nc = 0, nr = 0;
    for (int d = 0; d < L; d++) {
      int64_t sa = a->sizes[d], sb = b->sizes[d];
      if (d < nout || later[d]) {
        if (sa != 1 && sb != 1) batch[nb++] = d;
        else if (sa != 1) aonly[na++] = d;
        else if (sb != 1) bonly[nbo++] = d;
        else rest[nr++] = d;
      } else {
        if (sa != 1 && sb != 1) contr[nc++] = d;
        else {
          if (sa != 1) KD_TRY(ein_sum_keep(s, a, d, &a));
          if (sb != 1) KD_TRY(ein_sum_keep(s, b, d, &b));
          rest[nr++] = d;
        }
      }
    }
    if (nc == 0) {
      kd_value v[3] = {kd_value_tensor(a), kd_value_tensor(b), kd_value_none()};
      KD_TRY(kd_scope_call(s, KD_OP_mul, v, &r));
      continue;
    }
    int64_t pa[KD_MAX_DIMS], pb[KD_MAX_DIMS], po[KD_MAX_DIMS], osz[KD_MAX_DIMS];
    int64_t B = 1, M = 1, K = 1, N = 1;
    int ia = 0, ib = 0, io = 0;
    for (int k = 0; k < nb; k++) { pa[ia++] = batch[k]; pb[ib++] = batch[k]; po[io] = batch[k]; osz[io++] = a->sizes[batch[k]]; B *= a->sizes[batch[k]]; }
    for (int k = 0; k < na; k++) { pa[ia++] = aonly[k]; po[io] = aonly[k]; osz[io++] = a->sizes[aonly[k]]; M *= a->sizes[aonly[k]]; }
    for (int k = 0; k < nc; k++) { pa[ia++] = contr[k]; pb[ib++] = contr[k]; K *= a->sizes[contr[k]]; }
    for (int k = 0; k < nbo; k++) { pb[ib++] = bonly[k]; po[io] = bonly[k]; osz[io++] = b->sizes[bonly[k]]; N *= b->sizes[bonly[k]]; }
    for (int k = 0; k < nbo; k++) pa[ia++] = bonly[k];
    for (int k = 0; k < na; k++) pb[ib++] = aonly[k];
    for (int k = 0; k < nr; k++) { pa[ia++] = rest[k]; pb[ib++] = rest[k]; }
    for (int k = 0; k < nc; k++) { po[io] = contr[k]; osz[io++] = 1; }
    for (int k = 0; k < nr; k++) { po[io] = rest[k]; osz[io++] = 1; }
    int64_t s3a[3] = {B, M, K}, s3b[3] = {B, K, N}, inv[KD_MAX_DIMS];
    KD_TRY(ein_shape(s, KD_OP_permute, a, pa, L, &a));
    KD_TRY(ein_shape(s, KD_OP_reshape, a, s3a, 3, &a));
    KD_TRY(ein_shape(s, KD_OP_permute, b, pb, L, &b));
    KD_TRY(ein_shape(s, KD_OP_reshape, b, s3b, 3, &b));
    kd_value v[2] = {kd_value_tensor(a), kd_value_tensor(b)};
    KD_TRY(kd_scope_call(s, KD_OP_bmm, v, &r));
    KD_TRY(ein_shape(s, KD_OP_reshape, r, osz, L, &r));
    for (int k = 0; k < L; k++) inv[po[k]] = k;
    KD_TRY(ein_shape(s, KD_OP_permute, r, inv, L, &r));
  }
  /* 5. the summed dims are size 1 now */
  int64_t fin[KD_MAX_DIMS];
  for (int i = 0; i < nout; i++) fin[i] = r->sizes[i];
  for (int d = nout; d < L; d++)
    if (r->sizes[d] != 1) KD_TRY(ein_sum_keep(s, r, d, &r));
  return ein_shape(s, KD_OP_reshape, r, fin, nout, result);
}

KD_KERNEL(kd_composite_einsum) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = ein_impl(&s, args[0].v.str, args[1].v.tlist.data, args[1].v.tlist.n, &r);
  return kd_scope_finish(&s, st, r, outs);
}
