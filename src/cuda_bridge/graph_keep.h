/* graph_keep.h - the storages a CUDA graph keeps alive from its capture until its reset (Note
 * [Storages a CUDA graph keeps] in graph_keep.c). Called by src/napi/cuda.c around the graph
 * ops of the CUDA library; captures are per thread, as the stream they capture. */
#ifndef KD_CUDA_GRAPH_KEEP_H
#define KD_CUDA_GRAPH_KEEP_H

#include <stdint.h>

#include "core/status.h"
#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A capture on `device` begins on this thread: from now on the storages of the kernels run on
 * this thread at the CUDA key on that device are kept (KD_ERR_OOM when out of host memory). */
kd_status kd_cuda_graph_keep_begin(int device);
/* The innermost capture of this thread on `device` ended: its storages go to `graph` (a graph
 * handle), or are released when graph is 0 (the capture failed or was discarded). */
void kd_cuda_graph_keep_end(int device, uint64_t graph);
/* The graph was reset: the storages it kept are released. */
void kd_cuda_graph_keep_drop(int device, uint64_t graph);

#ifdef __cplusplus
}
#endif
#endif
