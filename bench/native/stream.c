/* stream.c - STREAM-style memory bandwidth of this machine, the hardware limit the bench
 * compares elementwise ops against. Built by bench/run.js on first use:
 *   gcc -O3 -march=native -fopenmp bench/native/stream.c -o bench/out/bin/stream
 *   OMP_NUM_THREADS=2 bench/out/bin/stream <elements> <repeats>
 * float32 arrays of <elements> each (pick >= 4x the last-level cache), kernels:
 *   copy   c[i] = a[i]            8 bytes/element
 *   triad  a[i] = b[i] + s*c[i]   12 bytes/element
 *   add    c[i] = a[i] + b[i]     12 bytes/element (what kindling's a.add(b) moves)
 * Bytes count what the program reads and writes, as STREAM does (no write-allocate).
 * Prints one JSON object: per kernel the median and best seconds and GB/s (1e9 bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"
#ifdef _OPENMP
#include <omp.h>
#endif


int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 25;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  if (n < 1024 || reps < 1) { fprintf(stderr, "usage: stream <elements> <repeats>\n"); return 2; }
  float *a = aligned_alloc(64, (size_t)n * 4), *b = aligned_alloc(64, (size_t)n * 4), *c = aligned_alloc(64, (size_t)n * 4);
  double *t = malloc(sizeof(double) * (size_t)reps * 3);
  if (!a || !b || !c || !t) { fprintf(stderr, "stream: out of memory\n"); return 1; }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  /* first touch in parallel, as the kernels will access the pages */
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.0f; }
  const float s = 3.0f;
  for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
    double t0 = now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) c[i] = a[i];
    double t1 = now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    double t2 = now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
    double t3 = now();
    if (r >= 0) { t[r] = t1 - t0; t[reps + r] = t2 - t1; t[2 * reps + r] = t3 - t2; }
  }
  const char *names[3] = {"copy", "triad", "add"};
  const double bytes[3] = {8.0 * (double)n, 12.0 * (double)n, 12.0 * (double)n};
  volatile float sink = a[n / 2] + c[n / 3]; /* keep the stores */
  (void)sink;
  printf("{\"elements\": %lld, \"repeats\": %d, \"threads\": %d", (long long)n, reps, threads);
  for (int k = 0; k < 3; k++) {
    double *v = t + k * reps;
    qsort(v, (size_t)reps, sizeof(double), cmp);
    double med = reps % 2 ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
    printf(", \"%s\": {\"median_s\": %.9g, \"best_s\": %.9g, \"gbps_median\": %.4f, \"gbps_best\": %.4f}", names[k], med,
           v[0], bytes[k] / med / 1e9, bytes[k] / v[0] / 1e9);
  }
  printf("}\n");
  free(a); free(b); free(c); free(t);
  return 0;
}
