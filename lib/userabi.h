/* Your primitive in the clean room: the functions a switch routine or a lock
 * of yours defines (docs/USERCODE.md, "Your primitive"). Include this header in
 * your C (`tools/cleanroom run --lock-file mine.c` compiles it with
 * -I lib), or follow it in NASM (`global cr_switch`, ...). The host builds your
 * file into position-independent code (no absolute addresses: no function
 * pointers or addresses of globals stored in data), the kernel and the hosted
 * build copy it where the CPU may run it, and the benchmarks measure it beside
 * the built-ins, under its own name (or in place of one: --switch-as).
 *
 * Freestanding: nothing of a C library; 32-bit, cdecl unless said. */
#ifndef LIB_USERABI_H
#define LIB_USERABI_H

#include <stdint.h>

/* --- a fiber switch routine (bench ctxsw, the workset's switch=user) ---
 * The contract of every built-in (runtime/switch.h, Klimiankou 2018 3.3):
 * ECX holds the address of a state word holding the stack pointer of the
 * fiber to run. Save what you need on the running fiber's stack, swap ESP
 * with the word, restore the other fiber's state from its stack, return.
 * EBX, ESI, EDI and EBP must survive a switch away and back (System V). */
void __attribute__((fastcall)) cr_switch(uint32_t *state_word);

/* Optional: the stack pointer of a new fiber, whose first switch into it
 * must "return" into entry(arg) with entry's cdecl frame below stack_top;
 * entry never returns. Without it, your routine must restore the callee
 * frame of runtime/switches.asm's switch_callee: EDI, ESI, EBX, EBP (four
 * words, lowest address first), then the return address. */
uint32_t cr_frame(uint32_t stack_top, void (*entry)(void *), void *arg);

/* --- a lock (bench locks: uncontended and among fibers that never yield
 * holding it; bench smplocks: between CPUs) ---
 * cr_lock_size: the bytes of one lock object (at most 65536), which the
 * harness allocates 64-byte aligned and zeroed, with room for per-CPU nodes
 * if you need them (cpus <= 32). cpu: the calling CPU's index, 0 .. cpus-1
 * (0 for fibers). A lock that spins must not be held across a fiber yield:
 * locks' contended case (fibers that yield holding the lock) skips it. */
extern const uint32_t cr_lock_size;
void cr_lock_init(void *lock, uint32_t cpus);
void cr_lock(void *lock, uint32_t cpu);
void cr_unlock(void *lock, uint32_t cpu);

#endif
