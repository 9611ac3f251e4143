#include "kernel/smp.h"

#include "arch/acpi.h"
#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/machine.h"
#include "arch/madt.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/error_record.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "kernel/smp_report.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/string.h"
#include "lib/wire.h"

/* The SDM's start-up sequence (Vol. 3A, "MP Initialization"): INIT, 10 ms,
 * SIPI, 200 us, a second SIPI if the CPU has not answered; then up to
 * START_WAIT_MS for it to say it runs. A real CPU answers within
 * microseconds; an emulator's vCPU is a host thread that must first be
 * scheduled: 32 vCPUs of QEMU on 2 busy host cores left 3 silent past
 * 100 ms. Only a CPU that never answers costs the whole wait. */
#define INIT_DELAY_US 10000u
#define SIPI_DELAY_US 200u
#define START_WAIT_MS 1000u
/* xAPIC IPIs name their destination in 8 bits, and 0xFF is the broadcast:
 * a CPU with a larger APIC id is reachable only in x2APIC mode. */
#define XAPIC_MAX_ID 254u
/* Without a calibrated TSC the delays assume this rate: too long, never
 * too short. */
#define UNCALIBRATED_HZ 5000000000ull
/* An idle CPU spins this long for its next post (a benchmark's next sample
 * finds it awake), then halts until the boot CPU's wake-up IPI: a CPU that
 * no case uses is idle for real, as the hosted build's workers sleep on a
 * futex. An SMT sibling then leaves its core to the worker beside it, and
 * under an emulator a vCPU gives its host thread back (QEMU's suite=smp on
 * 5 vCPUs of a 2-core host: 8.0 CPU-s a boot spinning, 4.5 halting). */
#define IDLE_SPIN_US 1000u
#define AP_STACK_BYTES 16384u
#define AP_DF_STACK_BYTES 8192u

/* One CPU's mailbox, on a cache line of its own (a neighbour's polling must
 * not land in a benchmark's measurement). The boot CPU writes fn, arg, the
 * paging state and then bumps posted (waking the CPU if it says it is
 * asleep); the CPU runs fn and copies posted to finished. */
struct slot {
    volatile uint32_t posted, finished;
    volatile uint32_t asleep; /* 1: halted, or about to, until a wake-up IPI */
    volatile uint32_t state; /* enum smp_cpu_state */
    uint32_t apic_id;
    void (*volatile fn)(void *);
    void *volatile arg;
    volatile uint32_t cr0_pg, cr3, cr4;
    struct fault_report fault; /* written by the CPU before it says FAULTED */
    struct gdt_cpu *gdt;
} __attribute__((aligned(64)));

static struct slot slots[SMP_MAX_CPUS];
static struct smp_summary summary = { .wanted = 1, .found = 0, .used = 1 };
static void (*ipi_fn)(void);

/* Read by the start-up code in boot/ap.asm, which exchanges it with 0 when it takes it. */
volatile uint32_t ap_boot_stack;
extern const uint8_t ap_trampoline[], ap_trampoline_end[], ap_gdtr[];

const struct smp_summary *smp_summary(void) { return &summary; }
uint32_t smp_cpus(void) { return summary.used; }

static uint64_t ticks_per_us(void)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : UNCALIBRATED_HZ;
    return hz / 1000000 ? hz / 1000000 : 1;
}

static void delay_us(uint64_t us)
{
    uint64_t t0 = rdtsc(), n = us * ticks_per_us();
    while (rdtsc() - t0 < n)
        cpu_pause();
}

/* The slot of the CPU with this APIC id: 0 for the boot CPU, a started
 * (or starting) CPU's own, or -1 for one the boot CPU gave up on. */
static int slot_of(uint32_t apic_id)
{
    if (apic_id == slots[0].apic_id)
        return 0;
    for (uint32_t i = 1; i < SMP_MAX_CPUS; i++)
        if (slots[i].gdt && slots[i].apic_id == apic_id)
            return (int)i;
    return -1;
}

uint32_t smp_this_cpu(void)
{
    int i = summary.used == 1 ? 0 : slot_of(lapic_id());
    return i < 0 ? 0 : (uint32_t)i;
}

/* --- on the other CPUs ------------------------------------------------------ */

static void adopt_paging(struct slot *s)
{
    uint32_t cr0 = read_cr0();
    if (!s->cr0_pg) {
        if (cr0 & CR0_PG)
            write_cr0(cr0 & ~CR0_PG);
        return;
    }
    if ((cr0 & CR0_PG) && read_cr3() == s->cr3 && read_cr4() == s->cr4)
        return;
    if (cr0 & CR0_PG)
        write_cr0(cr0 & ~CR0_PG);
    write_cr4(s->cr4);
    cr3_load(s->cr3); /* announced to the cache/TLB model, as every CR3 load is */
    gdt_set_double_fault_cr3(s->cr3);
    write_cr0(read_cr0() | CR0_PG | CR0_WP);
}

/* Until the boot CPU posts work: spinning for IDLE_SPIN_US, then halted.
 * The CPU says it is asleep (a locked exchange, which no later read passes)
 * before its last look at posted, and smp_post bumps posted the same way
 * before it looks at asleep: either that look sees the post, or the boot
 * CPU sees asleep and sends the IPI, which ends the halt even if it comes
 * before it (held pending while IF=0). */
static void wait_for_post(struct slot *s)
{
    uint64_t t0 = rdtsc(), spin = IDLE_SPIN_US * ticks_per_us();
    while (s->posted == s->finished) {
        if (rdtsc() - t0 < spin) {
            cpu_pause();
            continue;
        }
        xchg32(&s->asleep, 1);
        if (s->posted == s->finished)
            halt_until_interrupt();
        s->asleep = 0;
    }
}

void ap_main(void);
void ap_main(void)
{
    lapic_init_this_cpu();
    int i = slot_of(lapic_id());
    if (i <= 0) /* a CPU that answered too late took another's stack: stop */
        halt_forever();
    struct slot *s = &slots[i];
    gdt_load(s->gdt);
    idt_load();
    machine_caches_on();
    machine_fpu_init();
    s->state = SMP_CPU_IDLE; /* the boot CPU waits for this */
    for (;;) {
        wait_for_post(s);
        adopt_paging(s);
        s->fn(s->arg);
        compiler_barrier();
        s->finished = s->posted;
    }
}

void smp_cpu_faulted(const struct fault_report *r)
{
    int i = slot_of(lapic_id());
    if (i <= 0)
        halt_forever();
    struct slot *s = &slots[i];
    s->fault = *r;
    compiler_barrier();
    s->state = SMP_CPU_FAULTED;
    halt_forever(); /* IF=0: only INIT or a reset gets it out */
}

/* --- on the boot CPU --------------------------------------------------------- */


static bool start_cpu(uint32_t index, uint32_t apic_id, uint32_t page)
{
    struct slot *s = &slots[index];
    uint8_t *stack = memory_alloc(AP_STACK_BYTES, 4096), *df = memory_alloc(AP_DF_STACK_BYTES, 4096);
    struct gdt_cpu *g = memory_alloc(sizeof *g, 64);
    if (!stack || !df || !g)
        return false;
    gdt_build_for_cpu(g, (uint32_t)(df + AP_DF_STACK_BYTES));
    *s = (struct slot){ .state = SMP_CPU_OFF, .apic_id = apic_id, .gdt = g };
    struct table_pointer gdtr = { sizeof g->gdt - 1, (uint32_t)g->gdt };
    memcpy((uint8_t *)page + (ap_gdtr - ap_trampoline), &gdtr, 6);
    ap_boot_stack = (uint32_t)(stack + AP_STACK_BYTES);
    compiler_barrier();
    if (!lapic_send_init(apic_id))
        return false;
    delay_us(INIT_DELAY_US);
    for (uint32_t sipi = 0; sipi < 2 && s->state == SMP_CPU_OFF; sipi++) {
        if (!lapic_send_sipi(apic_id, page))
            return false;
        delay_us(SIPI_DELAY_US);
    }
    uint64_t t0 = rdtsc(), limit = (uint64_t)START_WAIT_MS * 1000 * ticks_per_us();
    while (s->state == SMP_CPU_OFF && rdtsc() - t0 < limit)
        cpu_pause();
    if (s->state != SMP_CPU_OFF)
        return true;
    /* Silent: take its stack back (a CPU waking later finds 0 and halts),
     * and put it back to waiting for a SIPI. */
    xchg32(&ap_boot_stack, 0);
    lapic_send_init(apic_id);
    return false;
}

static void ipi_entry(void)
{
    if (ipi_fn)
        ipi_fn();
    lapic_eoi();
}

static const char *prepare(struct madt_cpus *cpus, uint32_t *page)
{
    const struct acpi_tables *a = acpi_tables();
    if (!a->madt)
        return a->madt_why;
    madt_parse((const volatile uint8_t *)(uintptr_t)a->madt, a->madt_len, cpus);
    if (cpus->why)
        return cpus->why;
    const struct lapic_info *l = lapic_init();
    if (!l->present)
        return l->why;
    if (!l->x2apic && paging_supports(PAGESIZE_4K) && !paging_map_mmio(l->base))
        return "the local APIC's page could not be mapped for paging=on";
    *page = memory_low_page();
    if (!*page)
        return "the memory map has no free page below 1 MiB for the start-up code";
    return 0;
}

void smp_init(uint32_t want, bool oversubscribe)
{
    summary.wanted = want;
    if (oversubscribe) {
        error_record("cpus", "oversubscribe=1 is the hosted build's (workers sharing CPUs, for testing the logic "
                             "at scale): the kernel runs one worker per CPU; leave it out");
        finish_run(RUN_CONFIG);
    }
    if (want == 1)
        return;
    uint64_t t0 = rdtsc();
    static struct madt_cpus cpus; /* 1 KiB: not on the boot stack */
    uint32_t page = 0;
    char msg[200];
    const char *why = prepare(&cpus, &page);
    for (uint32_t i = 0; i < cpus.n; i++)
        smp_note_id(summary.found_ids, &summary.found, cpus.apic_id[i]);
    if (why) {
        summary.why = why;
        char n[12];
        fmt(n, sizeof n, "%u", want);
        fmt(msg, sizeof msg, "cpus=%s: %s; running on 1 CPU", want ? n : "all", why);
        error_record("cpus", msg);
        return;
    }
    summary.apic = lapic_info()->x2apic ? "x2apic" : "xapic";
    summary.trampoline = page;
    memcpy((void *)page, ap_trampoline, (uint32_t)(ap_trampoline_end - ap_trampoline));
    idt_set_ipi_handler(ipi_entry);
    idt_set_wake_handler(lapic_eoi); /* the halt is over: nothing else to do */
    uint32_t boot = lapic_id(), limit = want ? want : SMP_MAX_CPUS;
    slots[0] = (struct slot){ .state = SMP_CPU_BUSY, .apic_id = boot };
    summary.used_ids[0] = boot;
    for (uint32_t i = 0; i < cpus.n && summary.used < limit; i++) {
        if (cpus.apic_id[i] == boot)
            continue;
        if (!lapic_info()->x2apic && cpus.apic_id[i] > XAPIC_MAX_ID) {
            smp_note_id(summary.failed_ids, &summary.failed, cpus.apic_id[i]);
            fmt(msg, sizeof msg, "the CPU with APIC id %u is out of an xAPIC's reach (8-bit destinations, %u at most; "
                "the firmware left x2APIC off): going on without it", cpus.apic_id[i], XAPIC_MAX_ID);
            error_record("cpu_start", msg);
        } else if (start_cpu(summary.used, cpus.apic_id[i], page)) {
            summary.used_ids[summary.used++] = cpus.apic_id[i];
        } else {
            smp_note_id(summary.failed_ids, &summary.failed, cpus.apic_id[i]);
            fmt(msg, sizeof msg, "the CPU with APIC id %u did not answer INIT-SIPI-SIPI within %u ms: going on without it",
                cpus.apic_id[i], START_WAIT_MS);
            error_record("cpu_start", msg);
        }
    }
    uint32_t smt_bits = cpu_smt_bits(&summary.cores); /* the boot CPU's view, taken for all */
    for (uint32_t i = 0; i < summary.used; i++)
        summary.core_ids[i] = summary.used_ids[i] >> smt_bits;
    summary.start_ticks = rdtsc() - t0;
    if (want && summary.used < want) {
        summary.why = cpus.n < want ? "fewer CPUs than cpus= asks for" : "some CPUs did not start";
        char failed[40] = "";
        if (summary.failed)
            fmt(failed, sizeof failed, ", %u did not start", summary.failed);
        fmt(msg, sizeof msg, "cpus=%u: the MADT lists %u CPU%s%s: running on %u", want, cpus.n, cpus.n == 1 ? "" : "s",
            failed, summary.used);
        error_record("cpus", msg);
    } else if (!want && cpus.n > SMP_MAX_CPUS) {
        summary.why = "more CPUs than this kernel handles";
        fmt(msg, sizeof msg, "cpus=all: the MADT lists %u CPUs; this kernel uses at most %u", cpus.n, SMP_MAX_CPUS);
        error_record("cpus", msg);
    }
}

bool smp_post(uint32_t cpu, void (*fn)(void *), void *arg)
{
    if (cpu == 0 || cpu >= summary.used)
        return false;
    struct slot *s = &slots[cpu];
    if (s->posted != s->finished || s->state != SMP_CPU_IDLE)
        return false;
    s->fn = fn;
    s->arg = arg;
    uint32_t cr0 = read_cr0();
    s->cr0_pg = (cr0 & CR0_PG) != 0;
    s->cr3 = read_cr3();
    s->cr4 = read_cr4();
    compiler_barrier();
    xchg32(&s->posted, s->posted + 1); /* before the look at asleep (wait_for_post) */
    if (s->asleep)
        lapic_send_ipi(s->apic_id, VEC_WAKE);
    return true;
}

void smp_wait(uint32_t cpu) { smp_wait_within(cpu, SMP_WAIT_S); }

void smp_wait_within(uint32_t cpu, uint32_t seconds)
{
    if (cpu == 0 || cpu >= summary.used)
        return;
    struct slot *s = &slots[cpu];
    uint64_t t0 = rdtsc(), limit = (uint64_t)seconds * 1000000 * ticks_per_us();
    while (s->posted != s->finished && s->state != SMP_CPU_FAULTED && rdtsc() - t0 < limit)
        cpu_pause();
    if (s->state == SMP_CPU_FAULTED) {
        struct fault_report r = s->fault;
        r.on_cpu = true;
        r.cpu = cpu;
        r.apic_id = s->apic_id;
        fault_report_and_end(&r);
    }
    if (s->posted != s->finished) {
        s->state = SMP_CPU_SILENT;
        smp_report_silent(cpu, "APIC id", s->apic_id, seconds);
    }
}

void smp_thread_times(struct smp_thread_times *t) { *t = (struct smp_thread_times){ 0, 0, 0 }; }
uint64_t smp_preempted(void) { return 0; }

void smp_ipi_handler(void (*fn)(void)) { ipi_fn = fn; }

bool smp_ipi_send(uint32_t cpu)
{
    return cpu < summary.used && lapic_send_ipi(slots[cpu].apic_id, VEC_IPI);
}
