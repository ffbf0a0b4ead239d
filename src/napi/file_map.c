/* file_map.c (napi) - maps a file into memory for kd.load (lib/serialization.js).
 *
 *   mapFile(fd, nbytes) -> map       the first nbytes of the open file `fd`, mapped (mmap,
 *                                    PROT_READ, MAP_PRIVATE), as an opaque handle; the mapping
 *                                    lives until the handle and every view of it are gone
 *   mapView(map, begin, end, populate) -> ArrayBuffer
 *                                    bytes [begin, end) of the mapping, in place (no copy);
 *                                    populate: fault the range in up front (MADV_POPULATE_READ,
 *                                    faster than page by page when all of it will be read)
 *   releaseView(arrayBuffer)         detaches a view, so it stops holding the mapping at once
 *   unmapFile(map)                   drops the handle's hold on the mapping (idempotent)
 *   writeBytes(tensor, byteOffset, bytes)
 *                                    copies a Uint8Array's bytes into a new contiguous CPU
 *                                    tensor at byteOffset (bool bytes become 0/1): kd.load
 *                                    fills each tensor from the file in chunks
 *
 * Note [No Buffer over the whole file]
 * A Buffer cannot exceed buffer.constants.MAX_LENGTH (4 GiB on Node 20), so a checkpoint
 * larger than that cannot be one Buffer: the file is mapped once and each tensor's bytes are
 * handed out as their own view, so any file whose tensors each fit in a Buffer loads. The
 * mapping stays while the handle is open (until unmapFile or collection) or any view is alive;
 * the struct stays until the handle's finalizer has run too. lib/serialization.js checks a view's length against MAX_LENGTH before asking for
 * it, so Node never has to refuse one.
 *
 * Note [External buffer failure]
 * When napi_create_external_buffer fails after Node took the memory (a length over the
 * Buffer limit), Node has already run our finalizer; when it refuses up front (external
 * buffers not allowed, invalid arguments, a pending exception) it has not. Cleaning up in the
 * first case too was a double free (munmap and free twice, then an abort), so the view's count
 * is taken back here only in the second case; if another runtime ever did neither, the cost
 * would be a mapping kept until exit, never a double free.
 *
 * The file is opened read-only by the caller (fs.openSync gives Node's usual ENOENT/EACCES
 * errors) and may be closed right after mapping. Views are read-only: kd.load validates the
 * safetensors header in JS and then copies each tensor's bytes, in chunks of at most
 * lib/serialization.js's chunk size, from views of the mapping straight into the tensor's
 * storage (writeBytes): the file's bytes are copied once, from the page cache, whatever their
 * alignment in the file and however large the tensor (See Note [Chunked tensor reads] there).
 * Tensors do not point into the mapping: kindling tensors are writable (in-place ops) and free
 * their storage one by one, and kd_storage has no custom-deleter hook for foreign memory.
 *
 * Caveat: as with every mmap reader (Python's safetensors included), a file truncated by
 * another process while it is mapped makes reads past the new end fault (SIGBUS). Where mmap is
 * unavailable (a platform without it, or a runtime that refuses external buffers) mapFile or
 * mapView throws KD_NOT_SUPPORTED and kd.load reads each tensor's range from the file instead. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "napi/napi_util.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define KD_HAVE_MMAP 1
#else
#define KD_HAVE_MMAP 0
#endif

#if KD_HAVE_MMAP
/* Node-API finalizers and calls all run on the environment's thread: plain counting. */
typedef struct kd_file_map {
  void *addr;        /* NULL once unmapped */
  size_t len;
  int64_t views;     /* live views (each points into the mapping) */
  bool open;         /* unmapFile not called and the handle not collected: views may be made */
  bool handle_alive; /* the handle's finalizer has not run: the struct must stay */
} kd_file_map;

/* Unmaps once nothing can read the mapping, frees once nothing can reach the struct. */
static void kd_file_map_settle(kd_file_map *m) {
  if (m->views > 0) return;
  if (!m->open && m->addr) {
    munmap(m->addr, m->len);
    m->addr = NULL;
  }
  if (!m->handle_alive) free(m);
}

static void kd_file_map_handle_finalize(napi_env env, void *data, void *hint) {
  kd_file_map *m = (kd_file_map *)data;
  m->open = false;
  m->handle_alive = false;
  kd_file_map_settle(m);
}

static void kd_file_map_view_finalize(napi_env env, void *data, void *hint) {
  kd_file_map *m = (kd_file_map *)hint;
  m->views--;
  kd_file_map_settle(m);
}

static const napi_type_tag kd_file_map_tag = {0x6b696e646c696e67ULL, 0x66696c656d617001ULL};

static kd_file_map *kd_file_map_of(napi_env env, napi_value v) {
  napi_valuetype t;
  bool tagged = false;
  void *data = NULL;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
  if (napi_check_object_type_tag(env, v, &kd_file_map_tag, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  return (kd_file_map *)data;
}
#endif

static bool kd_napi_int64_arg(napi_env env, napi_value v, int64_t *out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_number) return false;
  double d;
  napi_get_value_double(env, v, &d);
  if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(int64_t)d) return false;
  *out = (int64_t)d;
  return true;
}

static napi_value kd_napi_map_file(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  size_t argc = 2;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd = -1;
  int64_t n = -1;
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || !kd_napi_int64_arg(env, argv[1], &n) || fd < 0)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "mapFile(fd, nbytes): expected a file descriptor and a byte count");
#if KD_HAVE_MMAP
  if (n == 0) return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: an empty file cannot be mapped");
  if ((uint64_t)n > (uint64_t)SIZE_MAX) return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: file too large to map");
  void *addr = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED)
    return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: mmap failed: %s", strerror(errno));
  kd_file_map *m = (kd_file_map *)malloc(sizeof *m);
  if (!m) {
    munmap(addr, (size_t)n);
    return kd_napi_throw_msg(env, KD_ERR_OOM, "mapFile: out of memory");
  }
  m->addr = addr;
  m->len = (size_t)n;
  m->views = 0;
  m->open = true;
  m->handle_alive = true;
  napi_value out;
  napi_status st = napi_create_external(env, m, kd_file_map_handle_finalize, NULL, &out);
  if (st != napi_ok) { /* no object was made: no finalizer will run */
    munmap(addr, (size_t)n);
    free(m);
    return kd_napi_throw_last(env, st);
  }
  KD_NAPI_CALL(env, napi_type_tag_object(env, out, &kd_file_map_tag));
  return out;
#else
  return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: mmap is not available on this platform");
#endif
}

static napi_value kd_napi_map_view(napi_env env, napi_callback_info info) {
#if KD_HAVE_MMAP
  napi_value argv[4];
  size_t argc = 4;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  kd_file_map *m = argc >= 3 ? kd_file_map_of(env, argv[0]) : NULL;
  int64_t begin = -1, end = -1;
  if (!m || !kd_napi_int64_arg(env, argv[1], &begin) || !kd_napi_int64_arg(env, argv[2], &end))
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "mapView(map, begin, end, populate): expected a mapping and a byte range");
  if (!m->open) return kd_napi_throw_msg(env, KD_ERR_DISPOSED, "mapView: the mapping was released");
  if (begin > end || (uint64_t)end > (uint64_t)m->len)
    return kd_napi_throw_msg(env, KD_ERR_INDEX, "mapView: range [%lld, %lld) is outside the %llu mapped bytes",
                             (long long)begin, (long long)end, (unsigned long long)m->len);
  bool populate = false;
  if (argc >= 4) napi_get_value_bool(env, argv[3], &populate);
  char *p = (char *)m->addr + begin;
  size_t len = (size_t)(end - begin);
  napi_value out;
  if (len == 0) {
    void *unused;
    KD_NAPI_CALL(env, napi_create_arraybuffer(env, 0, &unused, &out));
    return out;
  }
  if (populate) {
    uintptr_t page = 4096, lo = (uintptr_t)p & ~(page - 1);
#ifdef MADV_POPULATE_READ
    if (madvise((void *)lo, (uintptr_t)p + len - lo, MADV_POPULATE_READ) != 0)
#endif
      madvise((void *)lo, (uintptr_t)p + len - lo, MADV_WILLNEED);
  }
  m->views++;
  napi_value buf;
  napi_status st = napi_create_external_buffer(env, len, p, kd_file_map_view_finalize, m, &buf);
  if (st != napi_ok) {
    /* See Note [External buffer failure] */
    if (st == napi_no_external_buffers_allowed || st == napi_invalid_arg || st == napi_pending_exception)
      m->views--;
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) { /* clear it: the caller falls back to reading the file */
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapView: this runtime refused an external buffer of %llu bytes",
                             (unsigned long long)len);
  }
  KD_NAPI_CALL(env, napi_get_typedarray_info(env, buf, NULL, NULL, NULL, &out, NULL));
  return out;
#else
  return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapView: mmap is not available on this platform");
#endif
}

static napi_value kd_napi_release_view(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_ab = false, detached = false;
  if (argc < 1 || napi_is_arraybuffer(env, argv[0], &is_ab) != napi_ok || !is_ab)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "releaseView(arrayBuffer): expected an ArrayBuffer");
  if (napi_is_detached_arraybuffer(env, argv[0], &detached) == napi_ok && !detached) {
    if (napi_detach_arraybuffer(env, argv[0]) != napi_ok) { /* not detachable: the GC releases it later */
      napi_value ignored;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (pending) napi_get_and_clear_last_exception(env, &ignored);
    }
  }
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

static napi_value kd_napi_unmap_file(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
#if KD_HAVE_MMAP
  kd_file_map *m = argc >= 1 ? kd_file_map_of(env, argv[0]) : NULL;
  if (!m) return kd_napi_throw_msg(env, KD_ERR_TYPE, "unmapFile(map): expected a mapping from mapFile");
  m->open = false;
  kd_file_map_settle(m);
#endif
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

/* writeBytes(tensor, byteOffset, bytes): see the top of the file. Only for tensors kd.load has
 * just made (nothing else sees them yet, so no version bump). */
static napi_value kd_napi_write_bytes(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = 3;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_ta = false;
  int64_t at = -1;
  if (argc < 3 || !kd_napi_int64_arg(env, argv[1], &at) || napi_is_typedarray(env, argv[2], &is_ta) != napi_ok || !is_ta)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "writeBytes(tensor, byteOffset, bytes): expected a tensor, an offset and a Uint8Array");
  kd_tensor *t;
  kd_status st = kd_napi_unwrap_tensor(env, argv[0], "tensor", &t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_typedarray_type tt;
  size_t length, byte_offset;
  void *src;
  napi_value ab;
  KD_NAPI_CALL(env, napi_get_typedarray_info(env, argv[2], &tt, &length, &src, &ab, &byte_offset));
  if (tt != napi_uint8_array) return kd_napi_throw_msg(env, KD_ERR_TYPE, "writeBytes: bytes must be a Uint8Array");
  size_t n = length;
  uint64_t nbytes = (uint64_t)kd_tensor_numel(t) * kd_dtype_size(t->dtype);
  if (kd_tensor_device(t).type != KD_DEVICE_CPU || !kd_tensor_is_contiguous(t))
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "writeBytes: expected a contiguous CPU tensor");
  if ((uint64_t)at > nbytes || n > nbytes - (uint64_t)at)
    return kd_napi_throw_msg(env, KD_ERR_INDEX, "writeBytes: %zu bytes at %lld do not fit in the tensor's %llu bytes", n,
                             (long long)at, (unsigned long long)nbytes);
  if (n > 0) {
    uint8_t *dst = (uint8_t *)kd_tensor_data(t) + at;
    memcpy(dst, src, n);
    if (t->dtype == KD_DTYPE_BOOL) /* normalise to 0/1, as fromTypedArray does */
      for (size_t i = 0; i < n; i++) dst[i] = dst[i] != 0;
  }
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

napi_status kd_napi_register_file_map(napi_env env, napi_value exports) {
  napi_status st = kd_napi_set_fn(env, exports, "mapFile", kd_napi_map_file, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "mapView", kd_napi_map_view, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "releaseView", kd_napi_release_view, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "unmapFile", kd_napi_unmap_file, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "writeBytes", kd_napi_write_bytes, NULL);
  return st;
}
