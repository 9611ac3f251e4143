#include "runtime/switch.h"

#include "arch/cpu.h"
#include "arch/x86.h"
#include "kernel/memory.h"
#include "runtime/stack.h"
#include "runtime/userprims.h"

#define FXSAVE_BYTES 512
#define FNSAVE_BYTES 108
#define CALLEE_REGS 4
#define PUSHAD_REGS 8

const char *switch_name(enum switch_kind kind)
{
    switch (kind) {
    case SWITCH_PUSHAD: return "pushad";
    case SWITCH_CALLEE: return "callee";
    case SWITCH_FXSAVE: return "fxsave";
    case SWITCH_JUMP: return "jump";
    case SWITCH_USER: return "user";
    default: return "?";
    }
}

const char *switch_unavailable(enum switch_kind kind)
{
    if (kind == SWITCH_FXSAVE && !cpu_has(FEAT_FXSR) && !cpu_has(FEAT_FPU))
        return "the CPU has no FPU state to save (no FXSR, no FPU)";
    if (kind == SWITCH_USER && !user_switch())
        return "no switch routine of the user's: the host tool hands one over with --switch-file";
    return 0;
}

const char *switch_fpu_method(void) { return cpu_has(FEAT_FXSR) ? "fxsave" : "fnsave"; }

switch_fn switch_routine(enum switch_kind kind)
{
    switch (kind) {
    case SWITCH_PUSHAD: return switch_pushad;
    case SWITCH_FXSAVE: return cpu_has(FEAT_FXSR) ? switch_fxsave : switch_fnsave;
    case SWITCH_JUMP: return switch_jump;
    case SWITCH_USER: return user_switch() ? user_switch()->fn : switch_callee;
    default: return switch_callee;
    }
}

/* A new fiber that "returns" from a switch lands in entry with a normal
 * cdecl frame: [return address of entry][arg]. The return address is a
 * trap: entry must never return. */
static void __attribute__((noreturn)) entry_returned(void)
{
    ud2(); /* reported as an invalid_opcode fault naming the running fiber */
    for (;;)
        ;
}

uint32_t switch_initial_frame(enum switch_kind kind, uint32_t stack_top, void (*entry)(void *), void *arg)
{
    if (kind == SWITCH_USER && user_switch() && user_switch()->frame)
        return user_switch()->frame(stack_top, entry, arg);
    uint32_t *sp = (uint32_t *)(stack_top & ~15u);
    *--sp = 0;                            /* keeps entry's frame 16-byte aligned */
    *--sp = 0;
    *--sp = (uint32_t)arg;                /* entry's argument */
    *--sp = (uint32_t)entry_returned;     /* entry's return address */
    *--sp = (uint32_t)entry;              /* where the switch's ret (jump's jmp) goes */
    if (kind == SWITCH_PUSHAD) {
        for (int i = 0; i < PUSHAD_REGS; i++)
            *--sp = 0;
        return (uint32_t)sp;
    }
    for (int i = 0; i < CALLEE_REGS; i++)
        *--sp = 0;                        /* edi, esi, ebx, ebp = 0 ends frame walks */
    if (kind != SWITCH_FXSAVE)            /* callee and jump share this frame */
        return (uint32_t)sp;
    if (cpu_has(FEAT_FXSR)) {
        uint32_t regs = (uint32_t)sp;
        uint8_t *area = (uint8_t *)((regs - FXSAVE_BYTES) & ~15u);
        fxsave(area);                     /* the current, clean FPU/SSE state */
        sp = (uint32_t *)area;
        *--sp = regs;                     /* what switch_fxsave's `pop esp` loads */
        return (uint32_t)sp;
    }
    sp -= FNSAVE_BYTES / 4;
    fnsave(sp);                           /* fnsave also reinitialises the FPU... */
    frstor(sp);                           /* ...so put the state back */
    return (uint32_t)sp;
}

/* --- what a switch keeps --------------------------------------------------------- */

struct clobber_arg {
    switch_fn sw;
    uint32_t *word;
    uint32_t what;
};

static void clobber_fiber(void *arg)
{
    struct clobber_arg *c = arg;
    switch_clobber(c->sw, c->word, c->what);
}

int64_t switch_lost(enum switch_kind kind, uint32_t what)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct fiber_stack st;
    if (!fiber_stack_alloc(&st, FIBER_STACK_DEFAULT, "clobber")) {
        memory_release(&mark);
        return -1;
    }
    uint32_t word;
    switch_fn sw = switch_routine(kind);
    struct clobber_arg c = { sw, &word, what };
    word = switch_initial_frame(kind, fiber_stack_top(&st), clobber_fiber, &c);
    uint32_t lost = switch_check(sw, &word, what);
    fiber_stack_free(&st);
    memory_release(&mark);
    return lost;
}
