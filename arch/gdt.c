#include "arch/gdt.h"

#include "arch/mmu.h"
#include "arch/x86.h"

_Static_assert(sizeof(struct tss) == 104, "TSS layout");
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

static struct gdt_cpu boot_cpu;
/* The ring-0 stack of every entry from ring 3 (int 0x80, sysenter, the
 * threads' exceptions): one for all threads, since a switch rewrites the
 * frame on it rather than keeping a kernel stack per thread. Ring 3 runs
 * on the boot CPU only. */
static uint8_t tss_stack[16384] __attribute__((aligned(16)));
static uint8_t df_stack[16384] __attribute__((aligned(16)));
static void (*df_entry)(void);

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

void gdt_load(struct gdt_cpu *g)
{
    struct table_pointer p = { sizeof g->gdt - 1, (uint32_t)g->gdt };
    lgdt(&p);
    load_segments(SEL_KCODE, SEL_KDATA);
    ltr(SEL_TSS);
}

void gdt_init(void)
{
    struct gdt_cpu *g = &boot_cpu;
    g->gdt[GDT_NULL] = 0;
    g->gdt[GDT_KCODE] = descriptor(0, 0xfffff, ACC_KCODE, FLAGS_4K_32);
    g->gdt[GDT_KDATA] = descriptor(0, 0xfffff, ACC_KDATA, FLAGS_4K_32);
    g->gdt[GDT_UCODE] = descriptor(0, 0xfffff, ACC_UCODE, FLAGS_4K_32);
    g->gdt[GDT_UDATA] = descriptor(0, 0xfffff, ACC_UDATA, FLAGS_4K_32);
    g->tss.ss0 = SEL_KDATA;
    g->tss.esp0 = (uint32_t)(tss_stack + sizeof tss_stack);
    g->tss.iomap_base = sizeof g->tss; /* no I/O permission bitmap */
    g->gdt[GDT_TSS] = descriptor((uint32_t)&g->tss, sizeof g->tss - 1, ACC_TSS, 0);
    gdt_load(g);
}

/* The GDT register names the calling CPU's table, which sits at the start
 * of its struct gdt_cpu. */
static struct gdt_cpu *this_cpu(void)
{
    struct table_pointer p;
    sgdt(&p);
    return (struct gdt_cpu *)p.base;
}

void gdt_set_kernel_stack(uint32_t esp0) { this_cpu()->tss.esp0 = esp0; }
uint32_t gdt_kernel_stack_top(void) { return (uint32_t)(tss_stack + sizeof tss_stack); }

struct tss *gdt_main_tss(void) { return &this_cpu()->tss; }

static void build_df_task(struct gdt_cpu *g, uint32_t stack_top)
{
    struct tss *t = &g->df_tss;
    *t = (struct tss){ 0 };
    t->eip = (uint32_t)df_entry;
    t->esp = stack_top;
    t->eflags = 0x2; /* interrupts stay off in the task too */
    t->cs = SEL_KCODE;
    t->ss = t->ds = t->es = t->fs = t->gs = SEL_KDATA;
    t->cr3 = read_cr3();
    t->iomap_base = sizeof *t;
    g->gdt[GDT_DF_TSS] = descriptor((uint32_t)t, sizeof *t - 1, ACC_TSS, 0);
}

void gdt_init_double_fault_task(void (*entry)(void))
{
    df_entry = entry;
    build_df_task(&boot_cpu, (uint32_t)(df_stack + sizeof df_stack));
}

void gdt_set_double_fault_cr3(uint32_t cr3) { this_cpu()->df_tss.cr3 = cr3; }

void gdt_build_for_cpu(struct gdt_cpu *g, uint32_t df_stack_top)
{
    for (uint32_t i = 0; i < GDT_ENTRIES; i++)
        g->gdt[i] = boot_cpu.gdt[i];
    g->tss = (struct tss){ 0 };
    g->tss.ss0 = SEL_KDATA; /* esp0 stays 0: ring 3 never runs there */
    g->tss.iomap_base = sizeof g->tss;
    g->gdt[GDT_TSS] = descriptor((uint32_t)&g->tss, sizeof g->tss - 1, ACC_TSS, 0);
    build_df_task(g, df_stack_top);
}
