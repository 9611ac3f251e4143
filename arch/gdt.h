/* Flat ring-0 and ring-3 segments and a TSS (whose ring-0 stack takes
 * system calls and exceptions from ring 3), one GDT per CPU: the selectors
 * (arch/mmu.h) are the same everywhere, each CPU's TSS descriptors point at
 * its own TSSs, so the shared IDT's double-fault task gate reaches the
 * faulting CPU's own double-fault task. */
#ifndef ARCH_GDT_H
#define ARCH_GDT_H

#include <stdint.h>

struct __attribute__((packed)) tss {
    uint32_t prev_task, esp0, ss0, esp1, ss1, esp2, ss2, cr3, eip, eflags;
    uint32_t eax, ecx, edx, ebx, esp, ebp, esi, edi;
    uint32_t es, cs, ss, ds, fs, gs, ldt;
    uint16_t trap, iomap_base;
};

enum { GDT_NULL, GDT_KCODE, GDT_KDATA, GDT_UCODE, GDT_UDATA, GDT_TSS, GDT_DF_TSS, GDT_ENTRIES };

/* One CPU's descriptor table and task state segments. */
struct gdt_cpu {
    uint64_t gdt[GDT_ENTRIES];
    struct tss tss;    /* the CPU's own task: esp0 for entries from ring 3 */
    struct tss df_tss; /* the double-fault task */
};

/* The boot CPU's: builds and loads it. */
void gdt_init(void);
/* The double-fault task: #DF switches to it (IDT task gate), on a stack of
 * its own, so even a fault while pushing onto a full stack (a stack overflow
 * into a guard page) is reported instead of becoming a triple fault. The
 * interrupted context is then in gdt_main_tss(). entry must never return
 * except through task_return() (arch/x86.h). */
void gdt_init_double_fault_task(void (*entry)(void));
/* Page directory the double-fault task switches to (keep it current). */
void gdt_set_double_fault_cr3(uint32_t cr3);
/* The calling CPU's own TSS (found through its GDT register). */
struct tss *gdt_main_tss(void);
/* The kernel stack the CPU switches to on an exception from ring 3. */
void gdt_set_kernel_stack(uint32_t esp0);
/* Its top, as set at boot (also the sysenter stack). */
uint32_t gdt_kernel_stack_top(void);
/* Another CPU's table, built by the boot CPU in g (copied from its own,
 * the double-fault task on df_stack_top), and loaded by that CPU itself. */
void gdt_build_for_cpu(struct gdt_cpu *g, uint32_t df_stack_top);
void gdt_load(struct gdt_cpu *g);

#endif
