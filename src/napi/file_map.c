/* file_map.c (napi) - maps a file into memory for kd.load (lib/serialization.js).
 *
 *   mapFile(fd, nbytes, populate) -> Buffer
 *                                    the first nbytes of the open file `fd`, mapped (mmap,
 *                                    MAP_PRIVATE; populate: fault every page in up front with
 *                                    MAP_POPULATE, which is faster than faulting page by page
 *                                    when all of it will be read); the mapping lives until the
 *                                    Buffer is collected or unmapFile is called
 *   unmapFile(buffer.buffer)         detaches the ArrayBuffer, so the mapping goes at once
 *
 * The file is opened read-only by the caller (fs.openSync gives Node's usual ENOENT/EACCES
 * errors) and may be closed right after mapping. The mapping is read-only (PROT_READ,
 * MAP_PRIVATE): the Buffer is internal to lib/serialization.js, which only reads it (a writable
 * private mapping would make MAP_POPULATE copy every page to break copy-on-write). kd.load validates the safetensors header in JS and then copies each tensor's bytes
 * from the mapping straight into the tensor's storage (fromTypedArray): the file's bytes are
 * copied once, from the page cache, never read into an intermediate buffer first.
 *
 * Tensors do not point into the mapping: kindling tensors are writable (in-place ops) and free
 * their storage one by one, and kd_storage has no custom-deleter hook for foreign memory.
 *
 * Caveat: as with every mmap reader (Python's safetensors included), a file truncated by
 * another process while it is mapped makes reads past the new end fault (SIGBUS). Where mmap is
 * unavailable (a platform without it, or a runtime that refuses external buffers) mapFile
 * throws KD_NOT_SUPPORTED and kd.load reads the file into one Buffer instead. */
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
typedef struct kd_file_map {
  void *addr;
  size_t len;
} kd_file_map;

/* The only place a mapping is unmapped: runs when V8 drops the Buffer's memory (collected, or
 * detached by unmapFile). */
static void kd_file_map_finalize(napi_env env, void *data, void *hint) {
  kd_file_map *m = (kd_file_map *)hint;
  if (m) {
    munmap(m->addr, m->len);
    free(m);
  }
}
#endif

static napi_value kd_napi_map_file(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = 3;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool populate = false;
  if (argc >= 3) napi_get_value_bool(env, argv[2], &populate);
  int32_t fd = -1;
  int64_t n = -1;
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_value_int64(env, argv[1], &n) != napi_ok || fd < 0 || n < 0)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "mapFile(fd, nbytes): expected a file descriptor and a byte count");
  napi_value out;
  if (n == 0) { /* mmap refuses empty mappings */
    KD_NAPI_CALL(env, napi_create_buffer(env, 0, NULL, &out));
    return out;
  }
#if KD_HAVE_MMAP
  if ((uint64_t)n > (uint64_t)SIZE_MAX)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "mapFile: file too large to map");
  int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
  if (populate) flags |= MAP_POPULATE;
#endif
  void *addr = mmap(NULL, (size_t)n, PROT_READ, flags, fd, 0);
  if (addr == MAP_FAILED)
    return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: mmap failed: %s", strerror(errno));
  kd_file_map *m = (kd_file_map *)malloc(sizeof *m);
  if (!m) {
    munmap(addr, (size_t)n);
    return kd_napi_throw_msg(env, KD_ERR_OOM, "mapFile: out of memory");
  }
  m->addr = addr;
  m->len = (size_t)n;
  napi_status st = napi_create_external_buffer(env, (size_t)n, addr, kd_file_map_finalize, m, &out);
  if (st != napi_ok) {
    munmap(addr, (size_t)n);
    free(m);
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) { /* clear it: the caller falls back to reading the file */
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: this runtime does not allow external buffers");
  }
  return out;
#else
  return kd_napi_throw_msg(env, KD_ERR_NOT_SUPPORTED, "mapFile: mmap is not available on this platform");
#endif
}

static napi_value kd_napi_unmap_file(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_ab = false, detached = false;
  if (argc < 1 || napi_is_arraybuffer(env, argv[0], &is_ab) != napi_ok || !is_ab)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "unmapFile(arrayBuffer): expected an ArrayBuffer");
  if (napi_is_detached_arraybuffer(env, argv[0], &detached) == napi_ok && !detached) {
    if (napi_detach_arraybuffer(env, argv[0]) != napi_ok) { /* not detachable: the GC unmaps it later */
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

napi_status kd_napi_register_file_map(napi_env env, napi_value exports) {
  napi_status st = kd_napi_set_fn(env, exports, "mapFile", kd_napi_map_file, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "unmapFile", kd_napi_unmap_file, NULL);
  return st;
}
