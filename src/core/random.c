/* random.c - the generator state: a seed and an offset per thread (each Node thread, main or
 * worker, has its own generator). See Note [Random number mapping] in random.h. */
#include "core/random.h"

static _Thread_local uint64_t kd_rng_seed = KD_RANDOM_DEFAULT_SEED;
static _Thread_local uint64_t kd_rng_offset = 0;

void kd_random_manual_seed(uint64_t seed) {
  kd_rng_seed = seed;
  kd_rng_offset = 0;
}

uint64_t kd_random_initial_seed(void) { return kd_rng_seed; }

uint64_t kd_random_next_offset(uint64_t *seed) {
  if (seed) *seed = kd_rng_seed;
  return kd_rng_offset++;
}

void kd_random_get_state(uint64_t *seed, uint64_t *offset) {
  *seed = kd_rng_seed;
  *offset = kd_rng_offset;
}

void kd_random_set_state(uint64_t seed, uint64_t offset) {
  kd_rng_seed = seed;
  kd_rng_offset = offset;
}
