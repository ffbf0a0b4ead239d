/* api.h - C extensions (include/kindling.h): runs an extension's kindling_extension_init with the
 * function table and reports the ops it defined. Loading the shared object is src/napi/extension.c's. */
#ifndef KD_EXTENSION_API_H
#define KD_EXTENSION_API_H

#include "core/status.h"

struct kindling_api;
typedef int (*kd_extension_init_fn)(const struct kindling_api *api);

/* Calls init; *ops (malloc'ed, the caller frees) gets the ids of the ops it defined, also when
 * it fails after defining some (they stay defined). */
kd_status kd_extension_init(kd_extension_init_fn init, const char *path, int **ops, int *nops);

#endif
