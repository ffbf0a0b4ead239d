/* schema.c - the op-schema parser of runtime ops (PyTorch's syntax). See schema.h. */
#include "dispatch/schema.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kd_parser {
  const char *text;
  const char *p;
} kd_parser;

static kd_status kd_schema_error(const kd_parser *ps, const char *what) {
  const bool cut = strlen(ps->text) > 200; /* the message quotes a long schema's start only */
  return kd_error(KD_ERR_SCHEMA, "Invalid op schema '%.200s%s': %s at position %lld", ps->text, cut ? "..." : "", what,
                  (long long)(ps->p - ps->text));
}

static void kd_skip_space(kd_parser *ps) {
  while (*ps->p && isspace((unsigned char)*ps->p)) ps->p++;
}

static bool kd_eat(kd_parser *ps, const char *tok) {
  kd_skip_space(ps);
  size_t n = strlen(tok);
  if (strncmp(ps->p, tok, n) != 0) return false;
  ps->p += n;
  return true;
}

static bool kd_at_ident(const kd_parser *ps) { return isalpha((unsigned char)*ps->p) || *ps->p == '_'; }

/* An identifier (`what`) into buf: a schema error when there is none, or when it is longer than
 * buf holds (a name is never cut short). */
static kd_status kd_ident(kd_parser *ps, char *buf, size_t n, const char *what) {
  kd_skip_space(ps);
  const char *s = ps->p;
  if (!kd_at_ident(ps)) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected %s", what);
    return kd_schema_error(ps, msg);
  }
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
  size_t len = (size_t)(ps->p - s);
  if (len >= n) {
    char msg[128];
    ps->p = s;
    snprintf(msg, sizeof msg, "%s is longer than %zu characters", what, n - 1);
    return kd_schema_error(ps, msg);
  }
  memcpy(buf, s, len);
  buf[len] = '\0';
  return KD_OK;
}

typedef struct kd_type_name { const char *name; kd_arg_type type; } kd_type_name;

/* Spelled as PyTorch writes them; `[N]` after int is read as `[]`. */
static const kd_type_name kd_types[] = {
    {"Tensor?[]", KD_ARG_TENSORLIST_OPT}, {"Tensor[]", KD_ARG_TENSORLIST}, {"Tensor?", KD_ARG_TENSOR_OPT},
    {"Tensor", KD_ARG_TENSOR},            {"int[]?", KD_ARG_INTLIST_OPT},  {"int[]", KD_ARG_INTLIST},
    {"int?", KD_ARG_INT_OPT},             {"int", KD_ARG_INT},             {"float[]?", KD_ARG_DOUBLELIST_OPT},
    {"float[]", KD_ARG_DOUBLELIST_OPT},   {"float?", KD_ARG_DOUBLE_OPT},   {"float", KD_ARG_DOUBLE},
    {"bool?", KD_ARG_BOOL_OPT},           {"bool", KD_ARG_BOOL},           {"Scalar?", KD_ARG_SCALAR_OPT},
    {"Scalar", KD_ARG_SCALAR},            {"str?", KD_ARG_STRING_OPT},     {"str", KD_ARG_STRING},
    {"ScalarType?", KD_ARG_DTYPE_OPT},    {"Device?", KD_ARG_DEVICE_OPT},
};

/* Reads a type: the base word, then `?`, `[]`/`[N]` and `?` suffixes, normalised into buf. */
static kd_status kd_parse_type(kd_parser *ps, char *buf, size_t n, kd_arg_type *type) {
  char word[32];
  KD_TRY(kd_ident(ps, word, sizeof word, "a type"));
  if (strcmp(word, "SymInt") == 0) strcpy(word, "int");
  if (strcmp(word, "Layout") == 0 || strcmp(word, "MemoryFormat") == 0 || strcmp(word, "Generator") == 0)
    return kd_schema_error(ps, "this argument type is not supported by runtime ops");
  snprintf(buf, n, "%s", word);
  if (*ps->p == '(') return kd_schema_error(ps, "aliasing annotations (Tensor(a!)) are not supported by runtime ops");
  if (*ps->p == '?') { strncat(buf, "?", n - strlen(buf) - 1); ps->p++; }
  if (*ps->p == '[') {
    ps->p++;
    while (isdigit((unsigned char)*ps->p)) ps->p++;
    if (*ps->p != ']') return kd_schema_error(ps, "expected ']'");
    ps->p++;
    strncat(buf, "[]", n - strlen(buf) - 1);
    if (*ps->p == '?') { strncat(buf, "?", n - strlen(buf) - 1); ps->p++; }
  }
  for (size_t i = 0; i < sizeof kd_types / sizeof kd_types[0]; i++) {
    if (strcmp(buf, kd_types[i].name) == 0) {
      *type = kd_types[i].type;
      return KD_OK;
    }
  }
  return kd_schema_error(ps, "unknown argument type");
}

/* A number: an integer (decimal digits, read exactly into *i; one outside the int64 range is an
 * error, not a wrapped or saturated value) or a float (*d, *is_int false). */
static kd_status kd_parse_number(kd_parser *ps, double *d, int64_t *i, bool *is_int) {
  kd_skip_space(ps);
  const char *q = ps->p + (*ps->p == '-' || *ps->p == '+');
  const char *digits_end = q;
  while (isdigit((unsigned char)*digits_end)) digits_end++;
  char *end;
  errno = 0;
  double v = strtod(ps->p, &end);
  if (end == ps->p || errno) return kd_schema_error(ps, "expected a number");
  *is_int = digits_end > q && end == digits_end;
  if (*is_int) {
    errno = 0;
    long long w = strtoll(ps->p, &end, 10);
    if (errno == ERANGE) return kd_schema_error(ps, "integer out of the int64 range");
    *i = (int64_t)w;
    v = (double)w;
  }
  ps->p = end;
  *d = v;
  return KD_OK;
}

static bool kd_is_optional(kd_arg_type t) {
  switch (t) {
    case KD_ARG_TENSOR_OPT: case KD_ARG_SCALAR_OPT: case KD_ARG_INT_OPT: case KD_ARG_INTLIST_OPT:
    case KD_ARG_DTYPE_OPT: case KD_ARG_DEVICE_OPT: case KD_ARG_STRING_OPT: case KD_ARG_DOUBLE_OPT:
    case KD_ARG_BOOL_OPT: case KD_ARG_DOUBLELIST_OPT: return true;
    default: return false;
  }
}

/* A default value for an argument of type `t`. */
static kd_status kd_parse_default(kd_parser *ps, kd_arg_schema *a) {
  kd_skip_space(ps);
  kd_arg_type t = a->type;
  a->has_default = true;
  if (kd_eat(ps, "None")) {
    if (!kd_is_optional(t)) return kd_schema_error(ps, "None is the default of an optional (?) argument only");
    a->def = kd_value_none();
    return KD_OK;
  }
  if (t == KD_ARG_BOOL || t == KD_ARG_BOOL_OPT) {
    if (kd_eat(ps, "True")) { a->def = kd_value_bool(true); return KD_OK; }
    if (kd_eat(ps, "False")) { a->def = kd_value_bool(false); return KD_OK; }
    return kd_schema_error(ps, "expected True or False");
  }
  if (t == KD_ARG_STRING || t == KD_ARG_STRING_OPT) {
    char q = *ps->p;
    if (q != '\'' && q != '"') return kd_schema_error(ps, "expected a quoted string");
    const char *s = ++ps->p;
    while (*ps->p && *ps->p != q) ps->p++;
    if (*ps->p != q) return kd_schema_error(ps, "unterminated string");
    char *copy = strndup(s, (size_t)(ps->p - s));
    if (!copy) return kd_error(KD_ERR_OOM, "out of memory");
    ps->p++;
    a->def.kind = KD_VALUE_STRING;
    a->def.v.str = copy;
    return KD_OK;
  }
  if (t == KD_ARG_TENSORLIST || t == KD_ARG_TENSORLIST_OPT) {
    if (!kd_eat(ps, "[") || !kd_eat(ps, "]")) return kd_schema_error(ps, "a tensor list defaults to [] only");
    a->def.kind = KD_VALUE_TENSORLIST;
    a->def.v.tlist.data = NULL;
    a->def.v.tlist.n = 0;
    return KD_OK;
  }
  if (t == KD_ARG_INTLIST || t == KD_ARG_INTLIST_OPT) {
    int64_t vals[16];
    int n = 0;
    double d;
    bool is_int;
    if (kd_eat(ps, "[")) {
      if (!kd_eat(ps, "]")) {
        do {
          if (n == 16) return kd_schema_error(ps, "too many integers in a default list (at most 16)");
          KD_TRY(kd_parse_number(ps, &d, &vals[n], &is_int));
          if (!is_int) return kd_schema_error(ps, "expected an integer");
          n++;
        } while (kd_eat(ps, ","));
        if (!kd_eat(ps, "]")) return kd_schema_error(ps, "expected ']'");
      }
    } else {
      KD_TRY(kd_parse_number(ps, &d, &vals[n], &is_int));
      if (!is_int) return kd_schema_error(ps, "expected an integer list");
      n++;
    }
    int64_t *copy = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!copy) return kd_error(KD_ERR_OOM, "out of memory");
    memcpy(copy, vals, sizeof(int64_t) * (size_t)n);
    a->def = kd_value_intlist(copy, n);
    return KD_OK;
  }
  double d;
  int64_t i = 0;
  bool is_int;
  KD_TRY(kd_parse_number(ps, &d, &i, &is_int));
  switch (t) {
    case KD_ARG_INT:
    case KD_ARG_INT_OPT:
      if (!is_int) return kd_schema_error(ps, "expected an integer default");
      a->def = kd_value_int(i);
      return KD_OK;
    case KD_ARG_DOUBLE:
    case KD_ARG_DOUBLE_OPT: a->def = kd_value_double(d); return KD_OK;
    case KD_ARG_SCALAR:
    case KD_ARG_SCALAR_OPT: a->def = kd_value_scalar(is_int ? kd_scalar_i(i) : kd_scalar_f(d)); return KD_OK;
    default: return kd_schema_error(ps, "this argument type takes no default but None");
  }
}

/* Returns: Tensor | Tensor[] | () | (Tensor [name], ...). */
static kd_status kd_parse_returns(kd_parser *ps, int *nouts) {
  char type[32];
  kd_arg_type t;
  if (kd_eat(ps, "(")) {
    int n = 0;
    if (!kd_eat(ps, ")")) {
      do {
        KD_TRY(kd_parse_type(ps, type, sizeof type, &t));
        if (t != KD_ARG_TENSOR) return kd_schema_error(ps, "runtime ops return tensors only");
        char name[KD_SCHEMA_MAX_NAME + 1];
        kd_skip_space(ps);
        if (kd_at_ident(ps)) KD_TRY(kd_ident(ps, name, sizeof name, "a return name"));
        if (++n > KD_OP_MAX_OUTS) return kd_schema_error(ps, "too many returns");
      } while (kd_eat(ps, ","));
      if (!kd_eat(ps, ")")) return kd_schema_error(ps, "expected ')'");
    }
    *nouts = n;
    return KD_OK;
  }
  KD_TRY(kd_parse_type(ps, type, sizeof type, &t));
  if (t == KD_ARG_TENSOR) *nouts = 1;
  else if (t == KD_ARG_TENSORLIST) *nouts = -1;
  else return kd_schema_error(ps, "runtime ops return tensors only");
  return KD_OK;
}

static bool kd_valid_name(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

kd_status kd_schema_parse(const char *text, kd_op_schema *out) {
  memset(out, 0, sizeof *out);
  kd_parser ps = {text, text};
  char ns[KD_SCHEMA_MAX_NAME + 1], name[KD_SCHEMA_MAX_NAME + 1], overload[KD_SCHEMA_MAX_NAME + 1] = "";
  KD_TRY(kd_ident(&ps, ns, sizeof ns, "'namespace::name'"));
  if (!kd_eat(&ps, "::")) return kd_schema_error(&ps, "expected '::' (an op name is qualified: 'mylib::name')");
  KD_TRY(kd_ident(&ps, name, sizeof name, "an op name"));
  if (*ps.p == '.') {
    ps.p++;
    KD_TRY(kd_ident(&ps, overload, sizeof overload, "an overload name"));
  }
  if (!kd_valid_name(ns) || !kd_valid_name(name)) return kd_schema_error(&ps, "invalid name");
  kd_status st = KD_OK;
  if (!kd_eat(&ps, "(")) return kd_schema_error(&ps, "expected '('");
  if (!kd_eat(&ps, ")")) {
    do {
      if (kd_eat(&ps, "*")) continue; /* keyword-only marker: every argument can be named anyway */
      if (out->nargs == KD_SCHEMA_MAX_ARGS) { st = kd_schema_error(&ps, "too many arguments"); break; }
      kd_arg_schema *a = &out->args[out->nargs];
      char type[32], aname[KD_SCHEMA_MAX_NAME + 1];
      st = kd_parse_type(&ps, type, sizeof type, &a->type);
      if (st != KD_OK) break;
      if ((st = kd_ident(&ps, aname, sizeof aname, "an argument name")) != KD_OK) break;
      for (int i = 0; i < out->nargs && st == KD_OK; i++)
        if (strcmp(out->args[i].name, aname) == 0) st = kd_schema_error(&ps, "duplicate argument name");
      if (st != KD_OK) break;
      a->name = strdup(aname);
      out->type_names[out->nargs] = strdup(type);
      out->nargs++;
      if (!a->name || !out->type_names[out->nargs - 1]) { st = kd_error(KD_ERR_OOM, "out of memory"); break; }
      if (kd_eat(&ps, "=")) st = kd_parse_default(&ps, a);
      if (st != KD_OK) break;
    } while (kd_eat(&ps, ","));
    if (st == KD_OK && !kd_eat(&ps, ")")) st = kd_schema_error(&ps, "expected ',' or ')'");
  }
  if (st == KD_OK && !kd_eat(&ps, "->")) st = kd_schema_error(&ps, "expected '->' and the returns");
  if (st == KD_OK) st = kd_parse_returns(&ps, &out->nouts);
  kd_skip_space(&ps);
  if (st == KD_OK && *ps.p) st = kd_schema_error(&ps, "unexpected text after the returns");
  if (st == KD_OK) {
    size_t n = strlen(ns) + strlen(name) + strlen(overload) + 4;
    out->name = (char *)malloc(n);
    if (!out->name) st = kd_error(KD_ERR_OOM, "out of memory");
    else snprintf(out->name, n, "%s::%s%s%s", ns, name, *overload ? "." : "", overload);
  }
  if (st != KD_OK) kd_schema_free(out);
  return st;
}

void kd_schema_free(kd_op_schema *s) {
  for (int i = 0; i < s->nargs; i++) {
    free((void *)s->args[i].name);
    free(s->type_names[i]);
    kd_value *d = &s->args[i].def;
    if (s->args[i].has_default && d->kind == KD_VALUE_STRING) free((void *)d->v.str);
    if (s->args[i].has_default && d->kind == KD_VALUE_INTLIST) free((void *)d->v.ilist.data);
  }
  free(s->name);
  memset(s, 0, sizeof *s);
}
