/* fiber.cpp - the context switch and stacks of fiber.h. See fiber.h. */
#include "fiber.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kd_emu {

#if defined(__x86_64__)
extern "C" void kd_emu_switch_sp(void **save_sp, void *new_sp);
extern "C" void kd_emu_fiber_start(void);
/* Pushes the callee-saved registers on the current stack, stores rsp in *save_sp, loads new_sp
 * and pops the same frame from there. A new context's frame "returns" into kd_emu_fiber_start,
 * which calls r13(r12). The MXCSR and x87 control words are not switched: every fiber of a host
 * thread shares that thread's floating-point environment (no kernel changes it), which saves the
 * slow ldmxcsr/fldcw on every switch. */
__asm__(
    ".text\n"
    ".globl kd_emu_switch_sp\n"
    ".hidden kd_emu_switch_sp\n"
    ".type kd_emu_switch_sp,@function\n"
    "kd_emu_switch_sp:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size kd_emu_switch_sp, .-kd_emu_switch_sp\n"
    ".globl kd_emu_fiber_start\n"
    ".hidden kd_emu_fiber_start\n"
    ".type kd_emu_fiber_start,@function\n"
    "kd_emu_fiber_start:\n"
    "  movq %r12, %rdi\n"
    "  callq *%r13\n"
    "  ud2\n"
    ".size kd_emu_fiber_start, .-kd_emu_fiber_start\n");

void context_make(context *c, void *stack, size_t size, void (*entry)(void *), void *arg) {
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *sp = (uint64_t *)(top - 16); /* padding: rsp is 16-aligned after the ret, as before a call */
  *--sp = (uint64_t)(uintptr_t)&kd_emu_fiber_start;
  *--sp = 0;                           /* rbp */
  *--sp = 0;                           /* rbx */
  *--sp = (uint64_t)(uintptr_t)arg;    /* r12 */
  *--sp = (uint64_t)(uintptr_t)entry;  /* r13 */
  *--sp = 0;                           /* r14 */
  *--sp = 0;                           /* r15 */
  c->sp = sp;
  c->stack = stack;
  c->stack_size = size;
}

void context_switch(context *from, context *to) { kd_emu_switch_sp(&from->sp, to->sp); }

#else

void context_make(context *c, void *stack, size_t size, void (*entry)(void *), void *arg) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  /* makecontext passes int arguments: split the pointer in two. */
  uintptr_t a = (uintptr_t)arg, e = (uintptr_t)entry;
  makecontext(&c->uc, (void (*)())(void *)+[](unsigned ah, unsigned al, unsigned eh, unsigned el) {
    void (*fn)(void *) = (void (*)(void *))(((uintptr_t)eh << 32) | el);
    fn((void *)(((uintptr_t)ah << 32) | al));
  }, 4, (unsigned)(a >> 32), (unsigned)a, (unsigned)(e >> 32), (unsigned)e);
  c->stack = stack;
  c->stack_size = size;
}

void context_switch(context *from, context *to) { swapcontext(&from->uc, &to->uc); }

#endif

void *stack_alloc(size_t size) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size = (size + page - 1) & ~(page - 1);
  char *p = (char *)mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  mprotect(p, page, PROT_NONE); /* the guard page */
  return p + page;
}

}  // namespace kd_emu
