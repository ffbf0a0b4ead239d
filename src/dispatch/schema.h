/* schema.h - parses an op schema written in PyTorch's syntax (torch.library.define):
 *   "mylib::scale(Tensor x, float alpha=1.0) -> Tensor"
 *   "mylib::split2(Tensor x, int[] sizes, *, bool flag=False) -> (Tensor, Tensor)"
 * into the kd_arg_schema array kd_call reads. Argument types: Tensor, Tensor?, Tensor[],
 * Tensor?[], int, int?, int[] (int[N], SymInt[] too), int[]?, float, float?, float[], float[]?,
 * bool, bool?, Scalar, Scalar?, str, str?, ScalarType?, Device?; defaults are numbers, True,
 * False, None, int lists ([1, 2]) and quoted strings; `*` (keyword-only marker) is accepted.
 * Returns: Tensor, (Tensor, ...) with up to KD_OP_MAX_OUTS tensors, Tensor[], or (). Aliasing
 * annotations (Tensor(a!)) are not supported: runtime ops are out-of-place. */
#ifndef KD_SCHEMA_H
#define KD_SCHEMA_H

#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_SCHEMA_MAX_ARGS 12
#define KD_SCHEMA_MAX_NAME 63 /* characters of a namespace, op, overload or argument name */

typedef struct kd_op_schema {
  char *name;            /* qualified: "mylib::scale" or "mylib::scale.overload" */
  int nargs;
  kd_arg_schema args[KD_SCHEMA_MAX_ARGS]; /* names, string and list defaults owned */
  char *type_names[KD_SCHEMA_MAX_ARGS];   /* the types as written ("float", "Tensor?") */
  int nouts;             /* tensors returned; -1: a Tensor[] */
} kd_op_schema;

/* Parses `text` into *out (KD_ERR_SCHEMA with the position on failure; nothing to free then). */
kd_status kd_schema_parse(const char *text, kd_op_schema *out);
/* Frees what a parsed schema owns. */
void kd_schema_free(kd_op_schema *s);

#ifdef __cplusplus
}
#endif
#endif
