#include "arch/gdt.h"

#include "arch/mmu.h"
#include "arch/x86.h"

_Static_assert(sizeof(struct tss) == 104, "TSS layout");

enum { GDT_NULL, GDT_KCODE, GDT_KDATA, GDT_UCODE, GDT_UDATA, GDT_TSS, GDT_DF_TSS, GDT_ENTRIES };
_Static_assert(SEL_KCODE == GDT_KCODE << 3 && SEL_KDATA == GDT_KDATA << 3, "kernel selectors");
_Static_assert(SEL_UCODE == (GDT_UCODE << 3 | 3) && SEL_UDATA == (GDT_UDATA << 3 | 3), "user selectors");
_Static_assert(SEL_TSS == GDT_TSS << 3 && SEL_DF_TSS == GDT_DF_TSS << 3, "TSS selectors");

/* Access bytes: present, DPL, code/data, type. */
#define ACC_KCODE 0x9a
#define ACC_KDATA 0x92
#define ACC_UCODE 0xfa
#define ACC_UDATA 0xf2
#define ACC_TSS 0x89 /* present, 32-bit available TSS */
#define FLAGS_4K_32 0xc /* granularity 4 KiB, 32-bit */

static uint64_t gdt[GDT_ENTRIES];
static struct tss tss;
/* The ring-0 stack of every entry from ring 3 (int 0x80, sysenter, the
 * threads' exceptions): one for all threads, since a switch rewrites the
 * frame on it rather than keeping a kernel stack per thread. */
static uint8_t tss_stack[16384] __attribute__((aligned(16)));
static struct tss df_tss;
static uint8_t df_stack[16384] __attribute__((aligned(16)));

static uint64_t descriptor(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
    uint64_t d = limit & 0xffff;
    d |= (uint64_t)(base & 0xffffff) << 16;
    d |= (uint64_t)access << 40;
    d |= (uint64_t)((limit >> 16) & 0xf) << 48;
    d |= (uint64_t)(flags & 0xf) << 52;
    d |= (uint64_t)(base >> 24) << 56;
    return d;
}

void gdt_init(void)
{
    gdt[GDT_NULL] = 0;
    gdt[GDT_KCODE] = descriptor(0, 0xfffff, ACC_KCODE, FLAGS_4K_32);
    gdt[GDT_KDATA] = descriptor(0, 0xfffff, ACC_KDATA, FLAGS_4K_32);
    gdt[GDT_UCODE] = descriptor(0, 0xfffff, ACC_UCODE, FLAGS_4K_32);
    gdt[GDT_UDATA] = descriptor(0, 0xfffff, ACC_UDATA, FLAGS_4K_32);
    tss.ss0 = SEL_KDATA;
    tss.esp0 = (uint32_t)(tss_stack + sizeof tss_stack);
    tss.iomap_base = sizeof tss; /* no I/O permission bitmap */
    gdt[GDT_TSS] = descriptor((uint32_t)&tss, sizeof tss - 1, ACC_TSS, 0);

    struct table_pointer p = { sizeof gdt - 1, (uint32_t)gdt };
    lgdt(&p);
    load_segments(SEL_KCODE, SEL_KDATA);
    ltr(SEL_TSS);
}

void gdt_set_kernel_stack(uint32_t esp0) { tss.esp0 = esp0; }
uint32_t gdt_kernel_stack_top(void) { return (uint32_t)(tss_stack + sizeof tss_stack); }

struct tss *gdt_main_tss(void) { return &tss; }

void gdt_init_double_fault_task(void (*entry)(void))
{
    df_tss.eip = (uint32_t)entry;
    df_tss.esp = (uint32_t)(df_stack + sizeof df_stack);
    df_tss.eflags = 0x2; /* interrupts stay off in the task too */
    df_tss.cs = SEL_KCODE;
    df_tss.ss = df_tss.ds = df_tss.es = df_tss.fs = df_tss.gs = SEL_KDATA;
    df_tss.cr3 = read_cr3();
    df_tss.iomap_base = sizeof df_tss;
    gdt[GDT_DF_TSS] = descriptor((uint32_t)&df_tss, sizeof df_tss - 1, ACC_TSS, 0);
}

void gdt_set_double_fault_cr3(uint32_t cr3) { df_tss.cr3 = cr3; }
