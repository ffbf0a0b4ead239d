/* timing.h - the clock and the sort comparator shared by the native limit programs
 * (stream.c, sgemm.c), which are compiled standalone by bench/lib/native.js. */
#ifndef KD_BENCH_TIMING_H
#define KD_BENCH_TIMING_H

#include <time.h>

/* Monotonic seconds. */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* qsort comparator for doubles (medians of samples). */
static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

#endif
