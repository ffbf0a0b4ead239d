/* grid.cpp - running a kernel launch on the emulated GPU.
 *
 * Note [Emulated grids]: a launch is checked against an H100's limits when it is made (as the
 * GPU's launch would fail: more than 1024 threads per block, grid y/z over 65535, a zero-sized
 * grid or block, dynamic shared memory over 48 KiB without the kernel's opt-in, a stream of
 * another device) and otherwise enqueued on its stream. The stream's thread then runs every block
 * of the grid, one at a time, in an order permuted by the seed. Inside a block each GPU thread is
 * a fiber with its own stack. The scheduler runs the runnable fibers in a freshly shuffled order
 * until each finishes or suspends: at __syncthreads (released when every thread of the block
 * that has not exited is there) or at a warp exchange (released when every live lane of the warp
 * is there). So code that relies on an order CUDA does not guarantee (between threads, warps or
 * blocks) sees a different one here, and a barrier that not all threads reach is reported as a
 * launch failure instead of hanging. A trap (__trap, an emulated library's fault) ends the
 * launch and makes cudaErrorLaunchFailure sticky on the device, as on a GPU. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <map>
#include <numeric>
#include <vector>

#include "emu.h"
#include "fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define KD_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KD_EMU_ASAN 1
#endif
#endif
#ifdef KD_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kd_emu {

KD_EMU_TLS uint3 tls_thread_idx;
KD_EMU_TLS uint3 tls_block_idx;
KD_EMU_TLS dim3 tls_block_dim;
KD_EMU_TLS dim3 tls_grid_dim;

namespace {

enum fstate { F_NEW, F_RUNNABLE, F_BLOCK_WAIT, F_WARP_WAIT, F_DONE };

struct fiber {
  context ctx;
  uint3 tid;
  int lin = 0;      /* linear thread index in the block */
  fstate state = F_NEW;
  unsigned mask = 0; /* of the warp exchange it waits in */
  void *stack = nullptr;
};

struct block_run {
  kernel_task *task;
  std::vector<fiber> f;
  std::vector<uint64_t> xval; /* warp exchange slots, one per thread */
  std::vector<int> warp_waiting; /* lanes of each warp waiting in an exchange */
  int block_waiting = 0;         /* threads waiting at __syncthreads */
  std::vector<int> order;        /* the block's shuffled thread order */
  context sched;
  fiber *cur = nullptr;
  bool trapped = false;
#ifdef KD_EMU_ASAN
  void *sched_fake = nullptr;
  const void *sched_bottom = nullptr;
  size_t sched_size = 0;
#endif
};

KD_EMU_TLS block_run *tls_run = nullptr;
thread_local std::vector<void *> *tls_stacks = nullptr; /* free fiber stacks of this host thread */

/* A splitmix64 step: the shuffles' random numbers. */
inline uint64_t mix(uint64_t &s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void *take_stack() {
  if (!tls_stacks) tls_stacks = new std::vector<void *>();
  if (!tls_stacks->empty()) {
    void *s = tls_stacks->back();
    tls_stacks->pop_back();
    return s;
  }
  return stack_alloc(cfg().stack_size);
}
void give_stack(void *s) { tls_stacks->push_back(s); }

/* Switches from the running fiber back to the scheduler. */
void to_scheduler(bool finished) {
  block_run *r = tls_run;
  fiber *f = r->cur;
#ifdef KD_EMU_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake, r->sched_bottom, r->sched_size);
#endif
  context_switch(&f->ctx, &r->sched);
#ifdef KD_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  (void)finished;
}

void fiber_main(void *arg) {
  fiber *f = (fiber *)arg;
#ifdef KD_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &tls_run->sched_bottom, &tls_run->sched_size);
#endif
  tls_run->task->run_thread();
  f->state = F_DONE;
  to_scheduler(true);
  __builtin_unreachable();
}

void resume(block_run *r, fiber *f) {
  if (f->state == F_NEW) {
    f->stack = take_stack();
    if (!f->stack) { /* no memory for a stack: the launch fails */
      r->trapped = true;
      f->state = F_DONE;
      return;
    }
#ifdef KD_EMU_ASAN
    __asan_unpoison_memory_region(f->stack, cfg().stack_size);
#endif
    context_make(&f->ctx, f->stack, cfg().stack_size, fiber_main, f);
  }
  f->state = F_RUNNABLE;
  r->cur = f;
  tls_thread_idx = f->tid;
#ifdef KD_EMU_ASAN
  __sanitizer_start_switch_fiber(&r->sched_fake, f->ctx.stack, f->ctx.stack_size);
#endif
  context_switch(&r->sched, &f->ctx);
#ifdef KD_EMU_ASAN
  __sanitizer_finish_switch_fiber(r->sched_fake, nullptr, nullptr);
#endif
  r->cur = nullptr;
  if (f->state == F_DONE) {
    give_stack(f->stack);
    f->stack = nullptr;
  }
}

/* Runs one block to completion; false if it trapped or deadlocked. Each round runs every
 * runnable fiber once, in the block's shuffled order from a random starting point and direction
 * (so the order between barriers varies from round to round and block to block), then releases
 * the barriers every live thread (warp lane) has reached. */
bool run_block(block_run &r, uint64_t &rng) {
  const int n = (int)r.f.size(), nw = (n + 31) / 32;
  std::vector<int> &order = r.order;
  order.resize((size_t)n);
  for (int i = 0; i < n; i++) order[(size_t)i] = i;
  for (int i = n - 1; i > 0; i--) std::swap(order[(size_t)i], order[(size_t)(mix(rng) % (uint64_t)(i + 1))]);
  r.warp_waiting.assign((size_t)nw, 0);
  r.block_waiting = 0;
  int live = n;
  std::vector<int> warp_live((size_t)nw, 0);
  for (int w = 0; w < nw; w++) warp_live[(size_t)w] = (w + 1) * 32 <= n ? 32 : n - w * 32;
  for (;;) {
    const uint64_t z = mix(rng);
    const bool up = (z >> 32) & 1;
    int i = (int)(z % (uint64_t)n);
    for (int k = 0; k < n && !r.trapped; k++, i = up ? (i + 1 == n ? 0 : i + 1) : (i == 0 ? n - 1 : i - 1)) {
      fiber &f = r.f[(size_t)order[(size_t)i]];
      if (f.state != F_NEW && f.state != F_RUNNABLE) continue;
      resume(&r, &f);
      if (f.state == F_DONE) {
        live--;
        warp_live[(size_t)(f.lin >> 5)]--;
      }
    }
    if (r.trapped) break;
    if (live == 0) return true;
    bool released = false;
    for (int w = 0; w < nw; w++) {
      const int waiting = r.warp_waiting[(size_t)w];
      if (waiting == 0) continue;
      const int lo = w * 32, hi = lo + 32 < n ? lo + 32 : n;
      bool all = waiting == warp_live[(size_t)w];
      if (!all) { /* a partial mask: only the lanes it names must be there */
        unsigned need = 0;
        for (int i = lo; i < hi; i++)
          if (r.f[(size_t)i].state == F_WARP_WAIT) need |= r.f[(size_t)i].mask;
        all = true;
        for (int i = lo; i < hi && all; i++)
          if ((need >> (i - lo)) & 1u) all = r.f[(size_t)i].state == F_WARP_WAIT || r.f[(size_t)i].state == F_DONE;
      }
      if (!all) continue;
      for (int i = lo; i < hi; i++)
        if (r.f[(size_t)i].state == F_WARP_WAIT) r.f[(size_t)i].state = F_RUNNABLE;
      r.warp_waiting[(size_t)w] = 0;
      released = true;
    }
    if (!released && r.block_waiting == live) {
      for (auto &f : r.f)
        if (f.state == F_BLOCK_WAIT) f.state = F_RUNNABLE;
      r.block_waiting = 0;
      released = true;
    }
    if (!released) break; /* deadlock: threads wait at barriers the others never reach */
  }
  /* Abandon the suspended fibers: their stacks hold only the kernel's trivially destructible frames. */
  for (auto &f : r.f)
    if (f.stack) {
      give_stack(f.stack);
      f.stack = nullptr;
    }
  return false;
}

struct launch_rec {
  dim3 grid, block;
  int device;
  uint64_t seed;
  const char *name;
  std::shared_ptr<kernel_task> task;
};

void run_grid(const launch_rec &L) {
  const uint64_t nb = (uint64_t)L.grid.x * L.grid.y * L.grid.z;
  const int nt = (int)(L.block.x * L.block.y * L.block.z);
  block_run r;
  r.task = L.task.get();
  r.f.resize((size_t)nt);
  r.xval.resize((size_t)nt);
  tls_grid_dim = L.grid;
  tls_block_dim = L.block;
  block_run *saved = tls_run;
  tls_run = &r;
  uint64_t rng = L.seed;
  /* the blocks in a permuted order: b -> (a * b + c) mod nb with a odd and coprime to nb */
  uint64_t a = (mix(rng) | 1u) % (nb ? nb : 1);
  while (nb > 1 && (a == 0 || std::gcd(a, nb) != 1)) a = (a + 1) % nb;
  if (nb <= 1) a = 1;
  const uint64_t c = nb ? mix(rng) % nb : 0;
  bool ok = true;
  for (uint64_t i = 0; i < nb && ok; i++) {
    const uint64_t b = (uint64_t)(((unsigned __int128)a * i + c) % nb);
    tls_block_idx = uint3{(unsigned)(b % L.grid.x), (unsigned)(b / L.grid.x % L.grid.y),
                          (unsigned)(b / ((uint64_t)L.grid.x * L.grid.y))};
    for (int t = 0; t < nt; t++) {
      fiber &f = r.f[(size_t)t];
      f.lin = t;
      f.tid = uint3{(unsigned)(t % L.block.x), (unsigned)(t / L.block.x % L.block.y),
                    (unsigned)(t / (L.block.x * L.block.y))};
      f.state = F_NEW;
      f.stack = nullptr;
    }
    ok = run_block(r, rng);
    g_count.blocks++;
    g_count.threads += (uint64_t)nt;
  }
  tls_run = saved;
  if (!ok) {
    char what[160];
    snprintf(what, sizeof what, "%s in kernel %s", r.trapped ? "a trap" : "a deadlock at a barrier", L.name);
    set_sticky(L.device, cudaErrorLaunchFailure, what);
  }
}

std::mutex g_attr_mu;
std::map<const void *, int> *g_smem_optin = new std::map<const void *, int>();
std::atomic<uint64_t> g_launch_counter{0};

}  // namespace

void syncthreads(void) {
  block_run *r = tls_run;
  if (!r || !r->cur) return; /* called outside a kernel (host code): nothing to wait for */
  r->cur->state = F_BLOCK_WAIT;
  r->block_waiting++;
  to_scheduler(false);
}

int lane_id(void) {
  block_run *r = tls_run;
  return r && r->cur ? (r->cur->lin & 31) : 0;
}

void warp_exchange(unsigned mask, const void *value, void *out, size_t nbytes, int src) {
  block_run *r = tls_run;
  if (!r || !r->cur) {
    memcpy(out, value, nbytes);
    return;
  }
  fiber *f = r->cur;
  const int me = f->lin, base = me & ~31;
  memcpy(&r->xval[(size_t)me], value, nbytes);
  f->state = F_WARP_WAIT; /* everyone has published */
  f->mask = mask;
  r->warp_waiting[(size_t)(me >> 5)]++;
  to_scheduler(false);
  const int from = base + src;
  if (src >= 0 && src < 32 && from < (int)r->f.size() && r->f[(size_t)from].state != F_DONE)
    memcpy(out, &r->xval[(size_t)from], nbytes);
  else
    memcpy(out, value, nbytes);
  f->state = F_WARP_WAIT; /* everyone has read before a slot is written again */
  f->mask = mask;
  r->warp_waiting[(size_t)(me >> 5)]++;
  to_scheduler(false);
}

long long clock64(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ((long long)ts.tv_sec * 1000000000ll + ts.tv_nsec) * 1755 / 1000; /* a 1.755 GHz clock */
}

void trap(void) {
  block_run *r = tls_run;
  if (r && r->cur) {
    r->trapped = true;
    r->cur->state = F_DONE;
    to_scheduler(true);
    __builtin_unreachable();
  }
  throw fault{cudaErrorLaunchFailure};
}

cudaError_t func_set_attribute(const void *kernel, int attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return set_last_error(cudaErrorInvalidValue);
  if (value < 0 || value > (227 << 10)) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_attr_mu);
  (*g_smem_optin)[kernel] = value;
  return cudaSuccess;
}

void submit(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const void *kernel, const char *name,
            kernel_task *task) {
  std::shared_ptr<kernel_task> t(task);
  CUstream_st *s = resolve(stream);
  cudaError_t e = sticky(current_device());
  if (e != cudaSuccess) {
    set_last_error(e);
    return;
  }
  const uint64_t threads = (uint64_t)block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.x > 1024 ||
      block.y > 1024 || block.z > 64 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) {
    set_last_error(cudaErrorInvalidConfiguration);
    return;
  }
  size_t limit = 48 << 10;
  {
    std::lock_guard<std::mutex> lk(g_attr_mu);
    auto it = g_smem_optin->find(kernel);
    if (it != g_smem_optin->end()) limit = (size_t)it->second;
  }
  if (smem > limit) {
    set_last_error(cudaErrorInvalidValue);
    return;
  }
  if (s->device != current_device()) { /* a stream of another device */
    set_last_error(cudaErrorInvalidResourceHandle);
    return;
  }
  launch_rec L;
  L.grid = grid;
  L.block = block;
  L.device = s->device;
  L.name = name;
  L.task = t;
  L.seed = cfg().seed ^ (g_launch_counter.fetch_add(1) * 0x2545f4914f6cdd1dull);
  e = enqueue_op(s, [L] { run_grid(L); }, nullptr, nullptr, 1);
  if (e != cudaSuccess) set_last_error(e);
}

}  // namespace kd_emu
