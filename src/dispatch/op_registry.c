/* op_registry.c - the runtime op table. See op_registry.h. */
#include "dispatch/op_registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/autocast.h"

typedef struct kd_runtime_op {
  kd_op_info info;
  kd_op_schema schema;
  kd_kernel_fn kernels[KD_KEY_COUNT];
  void *kernel_data[KD_KEY_COUNT];
  void (*kernel_free[KD_KEY_COUNT])(void *);
  unsigned char autocast[KD_AUTOCAST_NDEV];
  kd_op_record_fn record;
  void *record_data;
  int backward_op; /* -1: none */
} kd_runtime_op;

static kd_runtime_op *kd_runtime_ops[KD_RUNTIME_OP_MAX];
static int kd_runtime_count; /* published with release stores after the entry is complete */
static pthread_mutex_t kd_registry_lock = PTHREAD_MUTEX_INITIALIZER;

static kd_runtime_op *kd_runtime(int id) {
  int i = id - KD_OP_COUNT;
  if (i < 0 || i >= __atomic_load_n(&kd_runtime_count, __ATOMIC_ACQUIRE)) return NULL;
  return kd_runtime_ops[i];
}

int kd_op_find(const char *name) {
  int n = __atomic_load_n(&kd_runtime_count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (strcmp(kd_runtime_ops[i]->info.name, name) == 0) return KD_OP_COUNT + i;
  return -1;
}

kd_status kd_op_define(const char *text, int *id) {
  kd_runtime_op *r = (kd_runtime_op *)calloc(1, sizeof *r);
  if (!r) return kd_error(KD_ERR_OOM, "out of memory");
  kd_status st = kd_schema_parse(text, &r->schema);
  if (st != KD_OK) {
    free(r);
    return st;
  }
  pthread_mutex_lock(&kd_registry_lock);
  if (kd_op_find(r->schema.name) >= 0)
    st = kd_error(KD_ERR_ALREADY_DEFINED, "op '%s' is already defined (an op is defined once per process)", r->schema.name);
  else if (kd_runtime_count == KD_RUNTIME_OP_MAX)
    st = kd_error(KD_ERR_NOT_SUPPORTED, "too many runtime ops (at most %d)", KD_RUNTIME_OP_MAX);
  if (st == KD_OK) {
    kd_op_info *op = &r->info;
    op->name = r->schema.name;
    op->id = KD_OP_COUNT + kd_runtime_count;
    op->nargs = r->schema.nargs;
    op->args = r->schema.args;
    op->nouts = r->schema.nouts;
    op->device_arg = -1;
    op->dtype_arg = -1;
    for (int i = 0; i < op->nargs; i++) {
      if (op->args[i].type == KD_ARG_DEVICE_OPT && op->device_arg < 0) op->device_arg = i;
      if (op->args[i].type == KD_ARG_DTYPE_OPT && op->dtype_arg < 0) op->dtype_arg = i;
    }
    r->kernels[KD_KEY_AUTOCAST] = kd_autocast_kernel;
    r->backward_op = -1;
    kd_runtime_ops[kd_runtime_count] = r;
    *id = op->id;
    __atomic_store_n(&kd_runtime_count, kd_runtime_count + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&kd_registry_lock);
  if (st != KD_OK) {
    kd_schema_free(&r->schema);
    free(r);
  }
  return st;
}

const kd_op_info *kd_op_info_of(int id) {
  if (id >= 0 && id < KD_OP_COUNT) return &kd_ops[id];
  kd_runtime_op *r = kd_runtime(id);
  return r ? &r->info : NULL;
}

const kd_op_schema *kd_op_schema_of(int id) {
  kd_runtime_op *r = kd_runtime(id);
  return r ? &r->schema : NULL;
}

kd_kernel_fn kd_op_kernel(int id, int key) {
  if (id >= 0 && id < KD_OP_COUNT) return kd_kernel_table[id][key];
  kd_runtime_op *r = kd_runtime(id);
  return r ? r->kernels[key] : NULL;
}

static kd_status kd_unknown_op(int id) { return kd_error(KD_ERR_INVALID_ARGUMENT, "no runtime op with id %d", id); }

kd_status kd_op_set_kernel(int id, kd_key key, kd_kernel_fn fn, void *data, void (*free_data)(void *), bool replace) {
  kd_runtime_op *r = kd_runtime(id);
  if (!r || key < 0 || key >= KD_KEY_COUNT) return kd_unknown_op(id);
  pthread_mutex_lock(&kd_registry_lock);
  kd_status st = KD_OK;
  if (r->kernels[key] && key < KD_KEY_AUTOGRAD && !replace) {
    st = kd_error(KD_ERR_ALREADY_DEFINED, "op '%s' already has a kernel for the %s dispatch key", r->info.name, kd_key_name(key));
  } else {
    if (r->kernel_free[key] && r->kernel_data[key]) r->kernel_free[key](r->kernel_data[key]);
    r->kernels[key] = fn;
    r->kernel_data[key] = data;
    r->kernel_free[key] = free_data;
  }
  pthread_mutex_unlock(&kd_registry_lock);
  return st;
}

void *kd_op_kernel_data(int id, int key) {
  kd_runtime_op *r = kd_runtime(id);
  return r && key >= 0 && key < KD_KEY_COUNT ? r->kernel_data[key] : NULL;
}

kd_status kd_op_set_autocast(int id, int dev, int policy) {
  kd_runtime_op *r = kd_runtime(id);
  if (!r) return kd_unknown_op(id);
  if (dev < 0 || dev >= KD_AUTOCAST_NDEV || policy < KD_AUTOCAST_NONE || policy > KD_AUTOCAST_NATIVE)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "autocast policy out of range");
  r->autocast[dev] = (unsigned char)policy;
  return KD_OK;
}

int kd_op_runtime_autocast(int id, int dev) {
  kd_runtime_op *r = kd_runtime(id);
  return r && dev >= 0 && dev < KD_AUTOCAST_NDEV ? r->autocast[dev] : KD_AUTOCAST_NONE;
}

kd_status kd_op_set_recorder(int id, kd_op_record_fn fn, void *data, bool replace) {
  kd_runtime_op *r = kd_runtime(id);
  if (!r) return kd_unknown_op(id);
  if (r->record && !replace) return kd_error(KD_ERR_ALREADY_DEFINED, "op '%s' already has an autograd formula", r->info.name);
  r->record = fn;
  r->record_data = data;
  return KD_OK;
}

kd_op_record_fn kd_op_recorder(int id, void **data) {
  kd_runtime_op *r = kd_runtime(id);
  if (!r) return NULL;
  *data = r->record_data;
  return r->record;
}

kd_status kd_op_set_backward(int id, int backward_op) {
  kd_runtime_op *r = kd_runtime(id);
  const kd_op_schema *b = kd_op_schema_of(backward_op);
  if (!r || !b) return kd_unknown_op(r ? backward_op : id);
  if (r->backward_op >= 0) return kd_error(KD_ERR_ALREADY_DEFINED, "op '%s' already has a backward", r->info.name);
  int nouts = r->info.nouts < 0 ? 1 : r->info.nouts, ntensors = 0;
  for (int i = 0; i < r->info.nargs; i++) ntensors += r->info.args[i].type == KD_ARG_TENSOR || r->info.args[i].type == KD_ARG_TENSOR_OPT;
  if (b->nargs != nouts + r->info.nargs || (b->nouts != ntensors && !(b->nouts == -1)))
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "the backward '%s' of '%s' must take %d gradient(s) then the op's %d arguments and return %d tensor(s)",
                    b->name, r->info.name, nouts, r->info.nargs, ntensors);
  r->backward_op = backward_op;
  return KD_OK;
}

int kd_op_backward(int id) {
  kd_runtime_op *r = kd_runtime(id);
  return r ? r->backward_op : -1;
}
