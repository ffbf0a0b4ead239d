/* sgemm.c - cblas_sgemm straight from OpenBLAS: the matmul speed kindling is measured
 * against (same sizes, same thread count). Built by bench/run.js on first use:
 *   gcc -O2 -I<cblas include dir> bench/native/sgemm.c -lopenblas -o bench/out/bin/sgemm
 *   bench/out/bin/sgemm <threads> <min_sample_s> <repeats> <n> [<n> ...]
 * For each n: C = A @ B with row-major n x n float32 matrices (C freshly written each call),
 * calls batched so one sample lasts >= min_sample_s, after a warm-up. Prints one JSON object
 * with the median and best seconds per call and GFLOP/s (2 n^3 / s). */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"


int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: sgemm <threads> <min_sample_s> <repeats> <n>...\n"); return 2; }
  int threads = atoi(argv[1]);
  double min_sample = atof(argv[2]);
  int reps = atoi(argv[3]);
  if (reps < 1) reps = 1;
#ifdef OPENBLAS_VERSION
  if (threads > 0) openblas_set_num_threads(threads);
  printf("{\"blas\": \"%s\", \"threads\": %d, \"results\": [", OPENBLAS_VERSION, openblas_get_num_threads());
#else
  printf("{\"blas\": \"cblas\", \"threads\": %d, \"results\": [", threads);
#endif
  double *t = malloc(sizeof(double) * (size_t)reps);
  for (int ai = 4; ai < argc; ai++) {
    int n = atoi(argv[ai]);
    size_t nn = (size_t)n * (size_t)n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4);
    if (!a || !b || !c || !t) { fprintf(stderr, "sgemm: out of memory\n"); return 1; }
    uint32_t x = 12345;
    for (size_t i = 0; i < nn; i++) {
      x = x * 1664525u + 1013904223u; a[i] = (float)(x >> 8) / 16777216.0f - 0.5f;
      x = x * 1664525u + 1013904223u; b[i] = (float)(x >> 8) / 16777216.0f - 0.5f;
    }
    /* warm-up and calibration: calls per sample so that a sample lasts >= min_sample */
    int64_t batch = 1;
    for (;;) {
      double t0 = now();
      for (int64_t i = 0; i < batch; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
      double dt = now() - t0;
      if (dt >= min_sample || batch > (1 << 24)) break;
      batch *= dt > 0 ? (int64_t)(min_sample / dt * 1.2) + 1 : 10;
    }
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      for (int64_t i = 0; i < batch; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
      t[r] = (now() - t0) / (double)batch;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp);
    double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    double flop = 2.0 * (double)n * (double)n * (double)n;
    printf("%s{\"n\": %d, \"batch\": %lld, \"median_s\": %.9g, \"best_s\": %.9g, \"gflops_median\": %.3f, \"checksum\": %.6g}",
           ai > 4 ? ", " : "", n, (long long)batch, med, t[0], flop / med / 1e9, (double)c[nn / 2]);
    free(a); free(b); free(c);
  }
  printf("]}\n");
  free(t);
  return 0;
}
