#include "arch/machine.h"

#include "arch/cpu.h"
#include "arch/mmu.h"
#include "arch/x86.h"

#define PIC1_DATA 0x21
#define PIC2_DATA 0xa1
#define CMOS_INDEX 0x70
#define CMOS_NMI_DISABLE 0x80

void machine_quiet(void)
{
    cli();
    outb(PIC1_DATA, 0xff);
    outb(PIC2_DATA, 0xff);
    outb(CMOS_INDEX, CMOS_NMI_DISABLE);
}

uint32_t machine_caches_on(void)
{
    uint32_t cr0 = read_cr0();
    if (cr0 & (CR0_CD | CR0_NW))
        write_cr0(cr0 & ~(CR0_CD | CR0_NW));
    return cr0;
}

void machine_fpu_init(void)
{
    if (!cpu_has(FEAT_FPU))
        return;
    uint32_t cr0 = read_cr0();
    cr0 &= ~(CR0_EM | CR0_TS);
    cr0 |= CR0_MP | CR0_NE;
    write_cr0(cr0);
    fninit();
    if (cpu_has(FEAT_FXSR))
        write_cr4(read_cr4() | CR4_OSFXSR | (cpu_has(FEAT_SSE) ? CR4_OSXMMEXCPT : 0));
}
