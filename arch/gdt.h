/* Flat ring-0 and ring-3 segments and one TSS (whose ring-0 stack later
 * work uses for system calls from ring 3). Selectors are in arch/mmu.h. */
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
/* The kernel stack the CPU switches to on an exception from ring 3. */
void gdt_set_kernel_stack(uint32_t esp0);

#endif
