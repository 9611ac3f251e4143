/* CPU exceptions at the CPU's level: the ones provoked on purpose are
 * caught; every other one goes to the handler the kernel registers.
 *
 * trap_expect() runs a function that raises an exception on purpose
 * (self-tests, MSR probes, page-fault benchmarks); if one of the given
 * vectors is raised, the function is abandoned and trap_expect returns
 * true with what happened. Never a triple fault: a double fault (say, a
 * stack overflow into a guard page, where the CPU cannot even push the page
 * fault's frame) switches to a task with a stack of its own, and is caught
 * (EXC_DF expected) or passed on like any other. Expecting is the boot
 * CPU's: on another CPU every exception is unexpected. */
#ifndef ARCH_TRAP_H
#define ARCH_TRAP_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/idt.h"

#define TRAP_VEC(v) (1u << (v))

struct trap_info {
    uint32_t vector, eip, err, cr2;
};

/* An exception nobody expected; esp is the interrupted stack pointer. */
typedef void (*trap_unexpected_fn)(struct trapframe *tf, uint32_t esp);

/* Installs the catching and the double-fault task; unexpected exceptions
 * go to `unexpected`. on_expecting_cpu tells whether the faulting CPU is
 * the boot CPU, the only one that expects (the kernel passes
 * lapic_on_boot_cpu: the local APIC reads its MSR through trap_expect, so
 * trap does not call it directly). */
void trap_init(trap_unexpected_fn unexpected, bool (*on_expecting_cpu)(void));
bool trap_expect(uint32_t vector_mask, void (*fn)(void *), void *arg, struct trap_info *info);

#endif
