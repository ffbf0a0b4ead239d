/* parallel.h - the CPU thread pool. kd_parallel_for splits [begin, end) into chunks of at
 * least `grain` and runs them on the pool's threads plus the calling one. Nested or
 * concurrent calls (another Node worker thread) run inline, so it never deadlocks. */
#ifndef KD_PARALLEL_H
#define KD_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KD_PARALLEL_GRAIN 32768 /* elements below which work stays on one thread (PyTorch's GRAIN_SIZE) */

typedef void (*kd_parallel_fn)(void *ctx, int64_t begin, int64_t end);

void kd_parallel_for(int64_t begin, int64_t end, int64_t grain, kd_parallel_fn fn, void *ctx);
/* Threads used (default: KINDLING_NUM_THREADS or the number of online CPUs). */
int kd_get_num_threads(void);
void kd_set_num_threads(int n);
/* Marks the calling thread as one that runs every kd_parallel_for inline, never taking the pool
 * (a background batch gather, src/napi/data_async.c: the training step on the main thread keeps
 * the pool). Thread-local; off by default. */
void kd_parallel_set_thread_inline(bool on);

#ifdef __cplusplus
}
#endif
#endif
