/* handle_table.c - the per-environment table of tensor handles: the structs that JS handles name
 * by token, the list of undisposed ones, and the sweep that releases the tensors of handles the
 * GC has collected, from kindling's own native calls (See Note [Tensor handles] and Note
 * [Freeing what the GC collected]). */
#include <stdint.h>
#include <stdlib.h>

#include "core/storage.h"
#include "napi/napi_util.h"

/* Note [Tensor handles]
 * A JS Tensor holds its native tensor through a handle: a JS External (napi_create_external)
 * whose value is not a pointer but a token, MARK | serial | slot. `slot` names a kd_napi_handle
 * struct of the environment's table; the struct stores the token it was last given. A handle is
 * live when the struct of its slot still holds its token; dispose() releases the tensor and puts
 * the struct on the free list with token 0, so every older handle of that slot reads as
 * disposed, and a struct can be reused at once (no pointer into freed memory can exist: the JS
 * object never holds one). MARK is the top bit, which no user-space pointer has on 64-bit
 * systems, so an External made by another addon is told apart without a type tag.
 * What each step costs (all of it on every op's path):
 *   - use as an argument: napi_get_value_external (an internal-field read of the External) and
 *     an array index; no property lookup, unlike napi_unwrap or napi_check_object_type_tag, which
 *     are each a private-symbol lookup.
 *   - creation: the External and, for the sweep, a weak reference to it (napi_create_reference
 *     with count 0); no wrap, no type tag (each a private property, and a hidden-class change).
 *   - dispose: the reference's deletion; no napi_remove_wrap, which deletes a property and
 *     migrates the object's hidden class.
 * Structs live in pages of KD_NAPI_HANDLE_PAGE that never move, so a kd_napi_handle pointer
 * stays valid while a native call makes other handles. The pages go with the environment, after
 * every finalizer that may read them (kd_napi_env_release). */

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
 * Node only queues a finalizer when its object is collected. Each handle gets a weak reference
 * to its External, which reads as empty as soon as the External was collected, and is on the
 * table's live list. Every 32nd new handle reads a canary: a weak reference to an object nothing
 * holds, which empties at the next full collection. After one, the table is swept once it has
 * grown enough since the last sweep (an eighth more handles or live bytes, so the cost is
 * amortised over the handles made): a handle whose reference is empty has its tensor released,
 * its reference deleted (which also takes it out of Node's finalizer queue) and its struct
 * recycled. References are read by their count, never by their value: a local handle to the
 * object would keep it alive through a collection that starts in the same native call. The sweep
 * calls no JS and runs in a native call on the JS thread, like dispose(). kd.memory() reads the
 * canary and sweeps after every collection, so a gc() shows in its counts. The canary itself has
 * a finalizer, which sweeps when the event loop turns after the collection: what a program
 * dropped is freed even if it makes no more tensors.
 * KINDLING_GC_FINALIZERS=0 turns the sweep off: each External then gets a finalizer instead of a
 * reference, which frees the tensor when the loop turns (a finalizer of a disposed handle finds
 * its token gone and does nothing). */

#define KD_NAPI_HANDLE_PAGE 1024

#if UINTPTR_MAX > 0xffffffffu
#define KD_TOKEN_BITS 64
#define KD_TOKEN_SLOT_BITS 32
#else
#define KD_TOKEN_BITS 32
#define KD_TOKEN_SLOT_BITS 20
#endif
#define KD_TOKEN_MARK ((uint64_t)1 << (KD_TOKEN_BITS - 1))
#define KD_TOKEN_SLOT_MASK (((uint64_t)1 << KD_TOKEN_SLOT_BITS) - 1)
#define KD_TOKEN_SERIAL_MASK ((KD_TOKEN_MARK - 1) & ~KD_TOKEN_SLOT_MASK)

static bool kd_handle_table_enabled_by_env(void) {
  const char *opt = getenv("KINDLING_GC_FINALIZERS");
  return !(opt && opt[0] == '0' && opt[1] == 0);
}

void kd_napi_handle_table_init(kd_napi_env *e) { e->table.enabled = kd_handle_table_enabled_by_env(); }

bool kd_napi_handle_table_enabled(kd_napi_env *e) { return e && e->table.enabled && !e->table.closed; }

/* Adds a page of free structs; false when out of memory or out of slots. */
static bool kd_handle_table_grow(kd_napi_handle_table *tb) {
  if ((uint64_t)(tb->npages + 1) * KD_NAPI_HANDLE_PAGE > KD_TOKEN_SLOT_MASK + 1) return false;
  kd_napi_handle **pages = (kd_napi_handle **)realloc(tb->pages, (tb->npages + 1) * sizeof *pages);
  if (!pages) return false;
  tb->pages = pages;
  kd_napi_handle *page = (kd_napi_handle *)calloc(KD_NAPI_HANDLE_PAGE, sizeof *page);
  if (!page) return false;
  uint32_t base = (uint32_t)(tb->npages * KD_NAPI_HANDLE_PAGE);
  for (int i = KD_NAPI_HANDLE_PAGE - 1; i >= 0; i--) {
    page[i].slot = base + (uint32_t)i;
    page[i].next = tb->free_list;
    tb->free_list = &page[i];
  }
  tb->pages[tb->npages++] = page;
  return true;
}

kd_napi_handle *kd_napi_handle_new(kd_napi_env *e, kd_tensor *t) {
  kd_napi_handle_table *tb = &e->table;
  if (tb->count == tb->capacity) {
    size_t cap = tb->capacity ? 2 * tb->capacity : 256;
    kd_napi_handle **grown = (kd_napi_handle **)realloc(tb->live, cap * sizeof *grown);
    if (!grown) return NULL;
    tb->live = grown;
    tb->capacity = cap;
  }
  if (!tb->free_list && !kd_handle_table_grow(tb)) return NULL;
  kd_napi_handle *h = tb->free_list;
  tb->free_list = h->next;
  h->next = NULL;
  h->t = t;
  h->ref = NULL;
  h->token = KD_TOKEN_MARK | ((++tb->serial << KD_TOKEN_SLOT_BITS) & KD_TOKEN_SERIAL_MASK) | h->slot;
  h->live_index = tb->count;
  tb->live[tb->count++] = h;
  tb->made_since_sweep++;
  return h;
}

kd_napi_handle *kd_napi_handle_find(kd_napi_env *e, uint64_t token) {
  if (!(token & KD_TOKEN_MARK) || !e) return NULL;
  size_t slot = (size_t)(token & KD_TOKEN_SLOT_MASK);
  size_t page = slot / KD_NAPI_HANDLE_PAGE;
  if (page >= e->table.npages) return NULL;
  kd_napi_handle *h = &e->table.pages[page][slot % KD_NAPI_HANDLE_PAGE];
  return h->token == token ? h : NULL;
}

bool kd_napi_token_is_handle(uint64_t token) { return (token & KD_TOKEN_MARK) != 0; }

/* Hands t's reference to the outermost running call that uses t and does not own one yet;
 * false when no running call uses t that way (See Note [Arguments are held for the call]). */
static bool kd_napi_frames_take(kd_napi_env *e, kd_tensor *t) {
  uintptr_t *slot = NULL;
  for (kd_napi_call_frame *f = e->frames; f; f = f->outer)
    for (int i = 0; i < f->n; i++)
      if (f->entries[i] == (uintptr_t)t) slot = &f->entries[i]; /* keeps the outermost */
  if (!slot) return false;
  *slot |= KD_NAPI_FRAME_OWNED;
  return true;
}

void kd_napi_call_frame_end(kd_napi_call_frame *f) {
  for (int i = 0; i < f->n; i++)
    if (f->entries[i] & KD_NAPI_FRAME_OWNED) kd_tensor_release((kd_tensor *)(f->entries[i] & ~KD_NAPI_FRAME_OWNED));
  f->n = 0;
}

void kd_napi_handle_free(napi_env env, kd_napi_env *e, kd_napi_handle *h) {
  if (!h->token) return;
  if (h->t && !(e->frames && kd_napi_frames_take(e, h->t))) kd_tensor_release(h->t);
  h->t = NULL;
  if (h->ref) napi_delete_reference(env, h->ref);
  h->ref = NULL;
  kd_napi_handle_table *tb = &e->table;
  kd_napi_handle *last = tb->live[--tb->count];
  tb->live[h->live_index] = last;
  last->live_index = h->live_index;
  h->token = 0;
  h->next = tb->free_list;
  tb->free_list = h;
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

/* Allocated bytes only: small storages grow with the handle count, which the sweep also watches. */
static int64_t kd_live_bytes(void) { return kd_storage_allocated_bytes(KD_DEVICE_CPU) + kd_storage_allocated_bytes(KD_DEVICE_CUDA); }

/* Releases every tracked handle of the table whose External was collected. */
static void kd_napi_handle_table_sweep(napi_env env, kd_napi_env *e) {
  kd_napi_handle_table *tb = &e->table;
  for (size_t i = 0; i < tb->count;) {
    kd_napi_handle *h = tb->live[i];
    if (h->ref && kd_napi_ref_collected(env, h->ref)) kd_napi_handle_free(env, e, h); /* moves the last handle into slot i */
    else i++;
  }
  tb->made_since_sweep = 0;
  tb->bytes_after_sweep = kd_live_bytes();
  tb->collection_pending = false;
}

/* The canary's finalizer, run when the event loop turns after the collection that took it: the
 * sweep for programs that make no more handles. */
static void kd_napi_canary_finalize(napi_env env, void *data, void *hint) {
  kd_napi_env *e = (kd_napi_env *)hint;
  if (kd_napi_handle_table_enabled(e)) kd_napi_handle_table_sweep(env, e);
  kd_napi_env_unhold(e);
}

/* True once the canary's object was collected (and a new canary is set); false if no
 * collection has run since, or if no canary can be made. */
static bool kd_napi_collection_seen(napi_env env, kd_napi_env *e) {
  kd_napi_handle_table *tb = &e->table;
  if (tb->canary && !kd_napi_ref_collected(env, tb->canary)) return false;
  bool seen = tb->canary != NULL;
  if (tb->canary) napi_delete_reference(env, tb->canary);
  tb->canary = NULL;
  napi_value obj;
  if (napi_create_external(env, NULL, kd_napi_canary_finalize, e, &obj) == napi_ok) {
    e->holds++;
    napi_create_reference(env, obj, 0, &tb->canary);
  }
  return seen;
}

void kd_napi_collect_unreachable(napi_env env, bool every_collection) {
  kd_napi_env *e = kd_napi_env_get(env);
  if (!kd_napi_handle_table_enabled(e)) return;
  kd_napi_handle_table *tb = &e->table;
  /* the canary is read at every 32nd new handle (a sweep is at most 32 handles late) */
  bool look = every_collection || (++tb->since_canary_read & 31) == 0;
  if (look && kd_napi_collection_seen(env, e)) tb->collection_pending = true;
  if (!tb->collection_pending) return;
  bool grown = tb->made_since_sweep * 8 >= tb->count || kd_live_bytes() * 8 >= tb->bytes_after_sweep * 9;
  if (!every_collection && !grown) return;
  kd_napi_handle_table_sweep(env, e);
}

void kd_napi_handle_table_close(napi_env env, kd_napi_env *e) {
  kd_napi_handle_table *tb = &e->table;
  tb->closed = true;
  while (tb->count) kd_napi_handle_free(env, e, tb->live[tb->count - 1]);
  free(tb->live);
  tb->live = NULL;
  tb->capacity = 0;
  if (tb->canary) napi_delete_reference(env, tb->canary);
  tb->canary = NULL;
}

void kd_napi_env_unhold(kd_napi_env *e) {
  e->holds--;
  if (e->finalized && e->holds == 0) kd_napi_env_release(e);
}

void kd_napi_env_release(kd_napi_env *e) {
  e->finalized = true;
  if (e->holds) return; /* the last finalizer that reads e frees it */
  for (size_t i = 0; i < e->table.npages; i++) free(e->table.pages[i]);
  free(e->table.pages);
  free(e->table.live);
  free(e);
}
