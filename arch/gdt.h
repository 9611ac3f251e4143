/* Flat ring-0 and ring-3 segments and one TSS (whose ring-0 stack takes
 * system calls and exceptions from ring 3). Selectors are in arch/mmu.h. */
#ifndef ARCH_GDT_H
#define ARCH_GDT_H

#include <stdint.h>

struct __attribute__((packed)) tss {
    uint32_t prev_task, esp0, ss0, esp1, ss1, esp2, ss2, cr3, eip, eflags;
    uint32_t eax, ecx, edx, ebx, esp, ebp, esi, edi;
    uint32_t es, cs, ss, ds, fs, gs, ldt;
    uint16_t trap, iomap_base;
};

void gdt_init(void);
/* The double-fault task: #DF switches to it (IDT task gate), on a stack of
 * its own, so even a fault while pushing onto a full stack (a stack overflow
 * into a guard page) is reported instead of becoming a triple fault. The
 * interrupted context is then in gdt_main_tss(). entry must never return
 * except through task_return() (arch/x86.h). */
void gdt_init_double_fault_task(void (*entry)(void));
/* Page directory the double-fault task switches to (keep it current). */
void gdt_set_double_fault_cr3(uint32_t cr3);
struct tss *gdt_main_tss(void);
/* The kernel stack the CPU switches to on an exception from ring 3. */
void gdt_set_kernel_stack(uint32_t esp0);
/* Its top, as set at boot (also the sysenter stack). */
uint32_t gdt_kernel_stack_top(void);

#endif
