/* refcount.h - dropping a reference of an atomically counted object (kd_tensor, kd_storage). */
#ifndef KD_REFCOUNT_H
#define KD_REFCOUNT_H

#include <stdbool.h>
#include <stdint.h>

/* Note [Dropping the last reference]
 * Most tensors and storages die with the one reference they were born with: an op's result that
 * the program disposes. A locked decrement costs about 20 cycles, several times the rest of the
 * release, so the owner of the last reference skips it: when an acquire load reads 1, no other
 * reference exists, and none can appear, since kindling has no weak references that upgrade to
 * strong ones (a new reference is always made from an existing one). The acquire pairs with the
 * release half of the other owners' decrements, so their writes to the object happen before it
 * is freed, as with the decrement itself. */

/* Drops one reference; true when it was the last (the caller frees the object). */
static inline bool kd_refcount_drop(int32_t *rc) {
  if (__atomic_load_n(rc, __ATOMIC_ACQUIRE) == 1) return true;
  return __atomic_sub_fetch(rc, 1, __ATOMIC_ACQ_REL) == 0;
}

#endif
