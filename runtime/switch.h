/* The fiber switch routines (runtime/switches.asm) and the initial frames
 * that let a new fiber be entered through them.
 *
 * Contract of every routine (Klimiankou 2018, section 3.3): ECX holds the
 * address of a state word that contains the stack pointer of the fiber to
 * run; the routine saves the running fiber's state on its own stack, swaps
 * ESP with the state word, and restores the other fiber's state. */
#ifndef RUNTIME_SWITCH_H
#define RUNTIME_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

/* pushad: the paper's routine; callee: the System V callee-saved registers;
 * fxsave: callee plus the FPU/SSE state; jump: callee's frame, left by `ret`
 * where the return-stack buffer predicts it and by an indirect jump where it
 * would not (runtime/switches.asm says why). */
enum switch_kind { SWITCH_PUSHAD, SWITCH_CALLEE, SWITCH_FXSAVE, SWITCH_JUMP, SWITCH_COUNT,
                   SWITCH_USER = SWITCH_COUNT /* the user's (runtime/userprims.h), past the built-ins */ };

typedef void(__attribute__((fastcall)) *switch_fn)(uint32_t *state_word);

void __attribute__((fastcall)) switch_pushad(uint32_t *state_word);
void __attribute__((fastcall)) switch_callee(uint32_t *state_word);
void __attribute__((fastcall)) switch_jump(uint32_t *state_word);
void __attribute__((fastcall)) switch_fxsave(uint32_t *state_word);
void __attribute__((fastcall)) switch_fnsave(uint32_t *state_word);

const char *switch_name(enum switch_kind kind);
/* NULL when the CPU can run this kind, else why not. `fxsave` uses
 * fxsave/fxrstor, or fnsave/frstor on an FPU without FXSR. */
const char *switch_unavailable(enum switch_kind kind);
switch_fn switch_routine(enum switch_kind kind);
/* "fxsave" or "fnsave": what the fxsave kind saves the FPU state with. */
const char *switch_fpu_method(void);

/* Builds, below stack_top, the frame that makes the switch routine of this
 * kind "return" into entry(arg) with a clean stack (16-byte aligned, FPU in
 * its initial state). Returns the stack pointer to put in a state word.
 * entry must not return. */
uint32_t switch_initial_frame(enum switch_kind kind, uint32_t stack_top, void (*entry)(void *), void *arg);

/* Self-test helpers (runtime/switch_check.asm). `what`: bit 0 x87 control
 * word, bit 1 xmm1; bit 2: both sides call the switch from one call site
 * (else each from its own). switch_check returns the mask of state a switch away
 * and back lost: bits 0-3 ebx, esi, edi, ebp; 4 the control word; 5 xmm1. */
#define SWITCH_CHECK_FPU 1u
#define SWITCH_CHECK_SSE 2u
#define SWITCH_CHECK_ONE_SITE 4u
uint32_t switch_check(switch_fn sw, uint32_t *word, uint32_t what);
/* switch_check's mask for this kind: a switch away to a fiber that trashes
 * the registers (what: SWITCH_CHECK_*) and back; -1 when no stack fits. The
 * self-tests ask it of the built-ins, ctxsw of the user's before measuring. */
int64_t switch_lost(enum switch_kind kind, uint32_t what);
__attribute__((noreturn)) void switch_clobber(switch_fn sw, uint32_t *word, uint32_t what);

#endif
