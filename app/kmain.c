#include "app/kmain.h"

#include "app/startup.h"
#include "app/suite.h"
#include "app/sysinfo.h"
#include "app/version.h"
#include "arch/cpu.h"
#include "arch/cpuidlimit.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/machine.h"
#include "arch/mcheck.h"
#include "arch/mtrr.h"
#include "arch/paging.h"
#include "arch/perfstate.h"
#include "arch/tsc.h"
#include "kernel/console.h"
#include "kernel/counters.h"
#include "kernel/evidence_record.h"
#include "kernel/exit.h"
#include "kernel/fault.h"
#include "kernel/fbcon.h"
#include "kernel/memory.h"
#include "kernel/recordlog.h"
#include "kernel/smp.h"
#include "lib/bootinfo.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "runtime/userprims.h"

static struct bootinfo loader;
static struct rec_writer records;
static struct config cfg;
static uint32_t boot_cr0;

static void setup_paging(void)
{
    if (paging_init(memory_top(), memory_alloc))
        return;
    rec_begin(REC_ERROR);
    rec_str("code", "paging");
    rec_str("msg", "not enough memory for the page tables: paging=on cases will be skipped");
    rec_end();
}

static void acpi_from_loader(void)
{
    const struct acpi_range *ranges;
    uint32_t n = memory_acpi_ranges(&ranges);
    acpi_use_rsdp_copy(loader.rsdp, loader.rsdp_len);
    acpi_use_map_ranges(ranges, n);
}

void kmain(uint32_t magic, uint32_t info)
{
    machine_quiet();                /* interrupts, PICs and NMI off: the clean room */
    boot_cr0 = machine_caches_on(); /* whatever the firmware left, caches on */
    bootinfo_read(magic, info, &loader); /* copy what the loader handed over, first */
    memory_init(&loader);           /* the free memory, and whether the image sits in it */
    acpi_from_loader();             /* multiboot2's RSDP copy, else where the map says ACPI lives */
    fbcon_use_boot_fb(&loader.fb);  /* the framebuffer GRUB set up, if any */
    /* serial= and qr= are needed before the first record: parsed silently
     * here (a rejected value keeps its default; the full parse reports it) */
    const struct config *early = startup_early_config();
    fbcon_use_window(early->provoke == PROVOKE_FBWINDOW); /* the framebuffer drawn as one above 4 GiB is */
    console_init(early->serial, early->serial_clock);    /* the screen (VGA text or framebuffer), then the serial ports (bounded, serial=) */
    gdt_init();                     /* our own flat segments and TSS */
    idt_init();                     /* every exception has a named handler */
    fault_init();                   /* ...that reports it as a fault record */
    rec_writer_init(&records, console_record_sink, 0);
    rec_attach(&records);
    recordlog_init((enum qr_mode)early->qr); /* qr= not off: a copy of every record from hello on */
    cpuidlimit_lift(early->provoke == PROVOKE_CPUIDLIMIT); /* firmware's "Limit CPUID Maxval" off */
    cpu_identify();                 /* CPUID: vendor, features, caches */
    mcheck_init();                  /* CR4.MCE: a machine check is a fault record, not a reset */
    mtrr_init(memory_regions());    /* memory types, before paging keeps 4 MiB pages within one */
    perfstate_init();               /* APERF/MPERF and the SMI count, probed safely */
    exit_detect(boot_info()->loader); /* QEMU, Bochs or real hardware */
    console_banner_serial("cleanroom " CLEANROOM_VERSION WIRE_BANNER_TAIL);
    sysinfo_hello();
    startup_config(&cfg);           /* bad cmdline: error records, done(config) */
    machine_fpu_init();
    sysinfo_cpu(boot_cr0);
    startup_require_tsc();          /* no TSC: error record, done(fail) */
    sysinfo_tsc();
    setup_paging();                 /* identity maps built, paging still off */
    sysinfo_mem();
    smp_init(cfg.cpus, cfg.oversubscribe); /* cpus=N: the other CPUs started and parked (default 1: none) */
    sysinfo_smp();                  /* ...and the smp record naming them (only when cpus= is not 1) */
    sysinfo_config(&cfg);
    counters_init(&cfg);            /* which hardware events count: none here, and why */
    evidence_record();              /* memory types, APERF/MPERF, SMI count, CR4.MCE */
    userprims_load();               /* the user's switch routine and lock, handed over as modules */
    suite_run(&cfg);                /* self-tests and benchmarks, then done */
}
