/* value.h - boxed op arguments and results. Every kernel has the same signature and reads
 * its arguments from a kd_value array laid out by the op's schema (src/ops/oplist/).
 * Inputs are borrowed; tensors in outputs are new references owned by the caller. */
#ifndef KD_VALUE_H
#define KD_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_value_kind {
  KD_VALUE_NONE = 0, /* an optional argument left out (or a JS null/undefined) */
  KD_VALUE_TENSOR,
  KD_VALUE_SCALAR,   /* JS number or boolean */
  KD_VALUE_INT,
  KD_VALUE_DOUBLE,
  KD_VALUE_BOOL,
  KD_VALUE_INTLIST,
  KD_VALUE_DTYPE,
  KD_VALUE_DEVICE,
  KD_VALUE_STRING,
  KD_VALUE_TENSORLIST,
  KD_VALUE_DOUBLELIST
} kd_value_kind;

typedef struct kd_value {
  kd_value_kind kind;
  union {
    kd_tensor *t;
    kd_scalar s;
    int64_t i;
    double d;
    bool b;
    kd_dtype dtype;
    kd_device device;
    const char *str;
    struct { const int64_t *data; int n; } ilist;
    struct { kd_tensor **data; int n; } tlist; /* outputs: malloc'ed array, see kd_value_release */
    struct { const double *data; int n; } dlist;
  } v;
} kd_value;

static inline kd_value kd_value_none(void) { kd_value x; x.kind = KD_VALUE_NONE; x.v.i = 0; return x; }
static inline kd_value kd_value_tensor(kd_tensor *t) { kd_value x; x.kind = KD_VALUE_TENSOR; x.v.t = t; return x; }
static inline kd_value kd_value_scalar(kd_scalar s) { kd_value x; x.kind = KD_VALUE_SCALAR; x.v.s = s; return x; }
static inline kd_value kd_value_int(int64_t i) { kd_value x; x.kind = KD_VALUE_INT; x.v.i = i; return x; }
static inline kd_value kd_value_double(double d) { kd_value x; x.kind = KD_VALUE_DOUBLE; x.v.d = d; return x; }
static inline kd_value kd_value_bool(bool b) { kd_value x; x.kind = KD_VALUE_BOOL; x.v.b = b; return x; }
static inline kd_value kd_value_dtype(kd_dtype t) { kd_value x; x.kind = KD_VALUE_DTYPE; x.v.dtype = t; return x; }
static inline kd_value kd_value_device(kd_device d) { kd_value x; x.kind = KD_VALUE_DEVICE; x.v.device = d; return x; }
static inline kd_value kd_value_intlist(const int64_t *p, int n) {
  kd_value x; x.kind = KD_VALUE_INTLIST; x.v.ilist.data = p; x.v.ilist.n = n; return x;
}
static inline bool kd_value_is_none(const kd_value *x) { return x->kind == KD_VALUE_NONE; }

/* Releases what an output value owns (tensor references, tensor-list arrays). */
void kd_value_release(kd_value *x);

#ifdef __cplusplus
}
#endif
#endif
