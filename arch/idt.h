/* The IDT: one gate per CPU exception (vectors 0-31), each handler
 * registered by name. A registered handler may fix the cause and return
 * true (the instruction is retried); otherwise the default handler set by
 * kernel/fault.c decides (expected fault, or a fault record). */
#ifndef ARCH_IDT_H
#define ARCH_IDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXC_COUNT 32
/* int 0x80: the system call gate of ring-3 threads (DPL 3). sysenter
 * arrives with the same vector in its frame. */
#define VEC_SYSCALL 0x80
/* The interrupts a CPU may take: the IPI a multi-CPU benchmark sends (only
 * while the receiver has IF=1 on purpose), the IPI that wakes an idle CPU
 * from its halt (kernel/smp.c: IF=1 for the hlt alone; after done the QR
 * pager's APIC timer ends its halts with the same vector), and the local
 * APIC's spurious vector, which is ignored. arch/isr.asm has the same
 * numbers. */
#define VEC_IPI 0xf0
#define VEC_WAKE 0xf1
#define VEC_SPURIOUS 0xff
#define IDT_ENTRIES 256
#define EXC_DE 0
#define EXC_DB 1
#define EXC_NMI 2
#define EXC_BP 3
#define EXC_UD 6
#define EXC_NM 7
#define EXC_DF 8
#define EXC_GP 13
#define EXC_PF 14
#define EXC_MC 18 /* machine check: only with CR4.MCE, else the CPU shuts down */

/* What isr_common pushes, lowest address first. */
struct trapframe {
    uint32_t gs, fs, es, ds;
    uint32_t edi, esi, ebp, esp_at_pushad, ebx, edx, ecx, eax;
    uint32_t vector, err;
    uint32_t eip, cs, eflags;
    uint32_t user_esp, user_ss; /* only valid when the CPU came from ring 3 */
};
_Static_assert(offsetof(struct trapframe, edi) == 16, "trapframe: segment registers pushed last");
_Static_assert(offsetof(struct trapframe, vector) == 48, "trapframe: after pushad");
_Static_assert(offsetof(struct trapframe, eip) == 56, "trapframe: CPU frame");

typedef bool (*exc_handler_fn)(struct trapframe *tf);
/* Everything that enters the kernel from ring 3 (system calls, and the
 * exceptions of ring-3 threads) goes to one handler: it may rewrite *tf, and
 * the return path resumes whatever ring-3 state *tf then holds. */
typedef void (*user_trap_fn)(struct trapframe *tf);

void idt_init(void);
/* Another CPU loads the same table. */
void idt_load(void);
/* Opens the IPI and spurious gates: fn runs for every VEC_IPI (it sends
 * the EOI itself). */
void idt_set_ipi_handler(void (*fn)(void));
/* Opens the wake-up gate: fn runs for every VEC_WAKE (it sends the EOI). */
void idt_set_wake_handler(void (*fn)(void));
/* Route #DF through a task gate to the double-fault task (arch/gdt.h). */
void idt_use_double_fault_task(void);
void exc_register(uint32_t vector, const char *name, exc_handler_fn handler);
void exc_set_default(void (*fallback)(struct trapframe *tf));
/* NULL: traps from ring 3 are handled like any other (a fault record). */
void exc_set_user_handler(user_trap_fn handler);
const char *exc_name(uint32_t vector);
void exc_dispatch(struct trapframe *tf);

#endif
