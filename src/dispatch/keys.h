/* keys.h - dispatch keys and keysets. A keyset is a bitset; the highest set bit is the
 * key that runs first. Backend keys sit low, functionality keys (Autograd, Autocast) high,
 * with gaps left for keys to come. */
#ifndef KD_KEYS_H
#define KD_KEYS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_key {
  KD_KEY_CPU = 0,
  KD_KEY_CUDA = 1,
  /* 2..7: room for more backends */
  KD_KEY_AUTOGRAD = 8,
  /* 9..11: room (e.g. functionalization, tracing) */
  KD_KEY_AUTOCAST = 12,
  KD_KEY_COUNT = 16
} kd_key;

typedef uint16_t kd_keyset;

#define KD_KEYSET(k) ((kd_keyset)(1u << (k)))
#define KD_KEYSET_BACKENDS ((kd_keyset)0x00ffu)
#define KD_KEYSET_ALL ((kd_keyset)0xffffu)

/* The key that runs first: the highest set bit; -1 for an empty set. */
static inline int kd_keyset_highest(kd_keyset ks) {
  return ks ? 31 - __builtin_clz((unsigned)ks) : -1;
}
/* Every key strictly below `k`. */
static inline kd_keyset kd_keyset_below(kd_key k) { return (kd_keyset)((1u << k) - 1u); }

const char *kd_key_name(int k);

#ifdef __cplusplus
}
#endif
#endif
