/* op_registry.h - ops defined at run time (kd.library in JS, C extensions): each gets an id after
 * the generated ones (KD_OP_COUNT + n), a kd_op_info built from its schema (schema.h) whose name
 * is the qualified one ("mylib::scale"), a kernel per dispatch key, an autocast policy per device
 * type and an optional autograd recorder. kd_call runs them exactly as generated ops: the same
 * keyset, device checks, defaults, fall-through walk and trace (kd_op_info_of, kd_op_kernel).
 * Kernels may carry data (a JS function, a C extension's function) read back with
 * kd_op_kernel_data. Runtime ops live until the process exits; the registry is process-wide,
 * appended under a lock and read without one. */
#ifndef KD_OP_REGISTRY_H
#define KD_OP_REGISTRY_H

#include "dispatch/dispatch.h"
#include "dispatch/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_RUNTIME_OP_MAX 4096

/* Records the autograd node of a call of a runtime op (after its kernel ran below Autograd and an
 * input requires grad): connects outs to a node with edges to the tensor args. */
typedef kd_status (*kd_op_record_fn)(void *data, const kd_op_info *op, kd_value *args, kd_value *outs);

/* Defines an op from its schema: KD_ERR_SCHEMA when it does not parse, KD_ERR_ALREADY_DEFINED when
 * the name is taken. Its Autocast slot runs the generic autocast kernel (no policy: fall through). */
kd_status kd_op_define(const char *schema, int *id);
/* The id of a runtime op by qualified name, -1 when none. */
int kd_op_find(const char *name);
/* The info of any op (generated or runtime); NULL for an unknown id. */
const kd_op_info *kd_op_info_of(int id);
/* The parsed schema of a runtime op (NULL for generated ops). */
const kd_op_schema *kd_op_schema_of(int id);
/* kernel[id][key] of any op. */
kd_kernel_fn kd_op_kernel(int id, int key);
/* Sets a runtime op's kernel for key with its data (freed by free_data, if given, when replaced).
 * KD_ERR_ALREADY_DEFINED when the slot is set and `replace` is false. */
kd_status kd_op_set_kernel(int id, kd_key key, kd_kernel_fn fn, void *data, void (*free_data)(void *), bool replace);
void *kd_op_kernel_data(int id, int key);
/* Autocast policy (kd_autocast_policy) of a runtime op on a device type (kd_autocast_dev). */
kd_status kd_op_set_autocast(int id, int dev, int policy);
int kd_op_runtime_autocast(int id, int dev);
/* The autograd recorder of a runtime op (its Autograd kernel calls it). */
kd_status kd_op_set_recorder(int id, kd_op_record_fn fn, void *data, bool replace);
kd_op_record_fn kd_op_recorder(int id, void **data);
/* The op computing a runtime op's input gradients (C extensions): it takes one gradient per
 * output, then the op's arguments, and returns one gradient per tensor argument. -1: none. */
kd_status kd_op_set_backward(int id, int backward_op);
int kd_op_backward(int id);

#ifdef __cplusplus
}
#endif
#endif
