/* fiber.h - user-level execution contexts for the emulated GPU's threads: a context switch that
 * saves only what the C ABI says a call preserves (x86-64: rbx, rbp, r12-r15, rsp; the
 * floating-point control words are the host thread's, shared by its fibers; elsewhere ucontext),
 * so suspending a GPU thread at a barrier costs a few nanoseconds. Stacks come from mmap with a guard page below, so a kernel that overflows its
 * stack faults instead of corrupting a neighbour. */
#ifndef KD_EMU_FIBER_H
#define KD_EMU_FIBER_H

#include <stddef.h>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace kd_emu {

struct context {
#if defined(__x86_64__)
  void *sp = nullptr;
#else
  ucontext_t uc;
#endif
  void *stack = nullptr; /* bottom of the usable stack (for the sanitizer's bookkeeping) */
  size_t stack_size = 0;
};

/* Prepares c to start entry(arg) on [stack, stack + size) at its first switch-in. */
void context_make(context *c, void *stack, size_t size, void (*entry)(void *), void *arg);
/* Saves the running context in *from and resumes *to. */
void context_switch(context *from, context *to);
/* A stack of `size` bytes with a guard page below it, or nullptr. */
void *stack_alloc(size_t size);

}  // namespace kd_emu

#endif
