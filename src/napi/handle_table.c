/* handle_table.c - the per-environment table of undisposed tensor handles, and the sweep that
 * releases the tensors of handles the GC has collected, from kindling's own native calls
 * (See Note [Freeing what the GC collected]). */
#include <stdint.h>
#include <stdlib.h>

#include "core/storage.h"
#include "napi/napi_util.h"

/* Note [Freeing what the GC collected]
 * Node-API runs the finalizers of a stable-version module only when the event loop turns, so a
 * synchronous `for (...) kd.randn([256, 256]).add(1)` would keep every collected tensor (10 GB
 * after 20000 iterations). Finalizers called by the GC itself (a module declaring
 * NAPI_VERSION_EXPERIMENTAL) are not safe on Node 20: Node calls each one through
 * CallIntoModule, which afterwards looks at the environment's pending exception, and if one is
 * set (a native call that threw and has not returned yet, or Node rethrowing it on return, which
 * allocates an error message and so can collect) it reports that exception as uncaught from
 * inside the GC, which aborts the process ("Check failed: AllowJavascriptExecution").
 * So no kindling code runs during a collection: the module declares a stable version, for which
 * Node only queues a finalizer when its object is collected. Each handle's wrap also gives
 * kindling a weak reference (napi_wrap's result), which reads as empty as soon as the object
 * was collected, and the handle is entered in this table. Every 32nd new handle reads a canary:
 * a weak reference to an object nothing holds, which empties at the next full collection. After
 * one, the table is swept once it has grown enough since the last sweep (an eighth more handles
 * or live bytes, so the cost is amortised over the handles made): a handle whose reference is
 * empty has its tensor released, its reference deleted (which also takes its finalizer out of
 * Node's queue) and its struct freed. References are read by their count, never by their value:
 * a local handle to the object would keep it alive through a collection that starts in the same
 * native call. The sweep calls no JS and runs in a native call on the JS thread, like dispose().
 * kd.memory() reads the canary and sweeps after every collection, so a gc() shows in its counts.
 * The wrap's finalizer stays as the fallback (an event-loop turn, or the environment's teardown).
 * KINDLING_GC_FINALIZERS=0 turns the table off: the finalizers then free everything, when the
 * loop turns. */

static bool kd_handle_table_enabled(void) {
  const char *opt = getenv("KINDLING_GC_FINALIZERS");
  return !(opt && opt[0] == '0' && opt[1] == 0);
}

void kd_napi_handle_table_init(kd_napi_env *e) { e->table.enabled = kd_handle_table_enabled(); }

bool kd_napi_handle_table_enabled(kd_napi_env *e) { return e && e->table.enabled && !e->table.closed; }

bool kd_napi_handle_track(kd_napi_env *e, kd_napi_handle *h) {
  kd_napi_handle_table *tb = &e->table;
  if (tb->count == tb->capacity) {
    size_t cap = tb->capacity ? 2 * tb->capacity : 256;
    kd_napi_handle **grown = (kd_napi_handle **)realloc(tb->handles, cap * sizeof *grown);
    if (!grown) return false;
    tb->handles = grown;
    tb->capacity = cap;
  }
  h->owner = e;
  h->slot = tb->count;
  tb->handles[tb->count++] = h;
  tb->made_since_sweep++;
  return true;
}

void kd_napi_handle_untrack(kd_napi_handle *h) {
  kd_napi_env *e = h->owner;
  if (!e) return;
  kd_napi_handle_table *tb = &e->table;
  kd_napi_handle *last = tb->handles[--tb->count];
  tb->handles[h->slot] = last;
  last->slot = h->slot;
  h->owner = NULL;
}

/* True when ref's object was collected. Reads the count rather than the value: a local handle
 * to the object would keep it alive through a collection that starts in this native call. */
static bool kd_napi_ref_collected(napi_env env, napi_ref ref) {
  uint32_t count = 0;
  if (napi_reference_ref(env, ref, &count) != napi_ok) return false;
  if (count == 0) return true; /* an emptied reference stays at 0 */
  napi_reference_unref(env, ref, &count);
  return false;
}

/* True once the canary's object was collected (and a new canary is set); false if no
 * collection has run since, or if no canary can be made. */
static bool kd_napi_collection_seen(napi_env env, kd_napi_handle_table *tb) {
  if (tb->canary && !kd_napi_ref_collected(env, tb->canary)) return false;
  bool seen = tb->canary != NULL;
  if (tb->canary) napi_delete_reference(env, tb->canary);
  tb->canary = NULL;
  napi_value obj;
  if (napi_create_object(env, &obj) == napi_ok) napi_create_reference(env, obj, 0, &tb->canary);
  return seen;
}

static int64_t kd_live_bytes(void) { return kd_storage_live_bytes(KD_DEVICE_CPU) + kd_storage_live_bytes(KD_DEVICE_CUDA); }

/* Releases every handle of the table whose object was collected. */
static void kd_napi_handle_table_sweep(napi_env env, kd_napi_handle_table *tb) {
  for (size_t i = 0; i < tb->count;) {
    kd_napi_handle *h = tb->handles[i];
    if (kd_napi_ref_collected(env, h->ref)) kd_napi_handle_free(env, h); /* moves the last handle into slot i */
    else i++;
  }
  tb->made_since_sweep = 0;
  tb->bytes_after_sweep = kd_live_bytes();
}

void kd_napi_collect_unreachable(napi_env env, bool every_collection) {
  kd_napi_env *e = kd_napi_env_get(env);
  if (!kd_napi_handle_table_enabled(e)) return;
  kd_napi_handle_table *tb = &e->table;
  /* the canary is read at every 32nd new handle (a sweep is at most 32 handles late) */
  bool look = every_collection || (++tb->since_canary_read & 31) == 0;
  if (look && kd_napi_collection_seen(env, tb)) tb->collection_pending = true;
  if (!tb->collection_pending) return;
  bool grown = tb->made_since_sweep * 8 >= tb->count || kd_live_bytes() * 8 >= tb->bytes_after_sweep * 9;
  if (!every_collection && !grown) return;
  tb->collection_pending = false;
  kd_napi_handle_table_sweep(env, tb);
}

void kd_napi_handle_table_close(napi_env env, kd_napi_env *e) {
  kd_napi_handle_table *tb = &e->table;
  tb->closed = true;
  for (size_t i = 0; i < tb->count; i++) { /* their finalizers free the structs at teardown */
    kd_napi_handle *h = tb->handles[i];
    h->owner = NULL;
    if (h->t) kd_tensor_release(h->t);
    h->t = NULL;
  }
  tb->count = 0;
  free(tb->handles);
  tb->handles = NULL;
  tb->capacity = 0;
  if (tb->canary) napi_delete_reference(env, tb->canary);
  tb->canary = NULL;
}
