/* runtime_op.c - the Autograd kernel of runtime ops (dispatch/op_registry.h): the op runs below
 * Autograd (so the ops a JS or C implementation calls are not recorded) and, when grad mode is on
 * and a tensor argument requires grad, the op's recorder connects the outputs to a node (for JS
 * ops, a custom node whose backward is the formula given to kd.library.registerAutograd). */
#include "autograd/autograd.h"
#include "dispatch/op_registry.h"

static kd_status kd_runtime_op_autograd(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  const bool record = kd_autograd_any_requires_grad(op, args);
  KD_TRY(kd_autograd_run_below(op, ks, args, outs));
  void *data = NULL;
  kd_op_record_fn recorder = kd_op_recorder(op->id, &data);
  if (!record || !recorder) return KD_OK;
  kd_status st = recorder(data, op, args, outs);
  if (st != KD_OK)
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
  return st;
}

kd_status kd_runtime_op_define(const char *schema, int *id) {
  KD_TRY(kd_op_define(schema, id));
  return kd_op_set_kernel(*id, KD_KEY_AUTOGRAD, kd_runtime_op_autograd, NULL, NULL, true);
}
