/* Ring 3: the kernel's ways in and out (arch/isr.asm) and the system call
 * stubs ring-3 code calls (arch/syscall_user.asm, in the user pages). */
#ifndef ARCH_USERMODE_H
#define ARCH_USERMODE_H

#include <stdint.h>

#include "arch/idt.h"

/* frame lies at the top of the TSS's ring-0 stack; returns through it. */
__attribute__((noreturn)) void user_enter(struct trapframe *frame);
/* Where sysenter lands (MSR_SYSENTER_EIP). */
extern const char sysenter_entry[];

/* System call number nr with three arguments, by `int 0x80` or by
 * `sysenter`; both return EAX. ECX and EDX are not preserved. */
uint32_t usys_int80(uint32_t nr, uint32_t a, uint32_t b, uint32_t c);
uint32_t usys_sysenter(uint32_t nr, uint32_t a, uint32_t b, uint32_t c);

#endif
