#include "runtime/smp_selftest.h"

#include "arch/mmu.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "kernel/selftest.h"
#include "kernel/smp.h"
#include "lib/fmt.h"

#define D SELFTEST_DETAIL_MAX
#define INCREMENTS 20000u
#define IPI_POLLS 50000000u

bool smp_tests_apply(void) { return smp_cpus() > 1; }

void smp_run_everywhere(void (*fn)(void *), void *arg)
{
    uint32_t n = smp_cpus();
    for (uint32_t c = 1; c < n; c++)
        smp_post(c, fn, arg);
    fn(arg);
    for (uint32_t c = 1; c < n; c++)
        smp_wait(c);
}

static volatile uint32_t answered[SMP_MAX_CPUS];

static void answer(void *arg)
{
    (void)arg;
    uint32_t me = smp_this_cpu();
    answered[me] = me + 1;
}

bool smp_test_every_cpu_answers(char *d)
{
    uint32_t n = smp_cpus(), wrong = 0;
    for (uint32_t c = 0; c < n; c++)
        answered[c] = 0;
    smp_run_everywhere(answer, 0);
    for (uint32_t c = 0; c < n; c++)
        wrong += answered[c] != c + 1;
    fmt(d, D, "%u CPUs, %u ran the function as themselves", n, n - wrong);
    return wrong == 0;
}

/* A plain increment under a cmpxchg lock, and a lock xadd: neither may lose
 * one while every CPU hammers the same line. */
static volatile uint32_t lock_word, locked_count, atomic_count;

static void hammer(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < INCREMENTS; i++) {
        while (cmpxchg32(&lock_word, 0, 1) != 0)
            cpu_pause();
        locked_count = locked_count + 1;
        __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
        xadd32(&atomic_count, 1);
    }
}

bool smp_test_no_lost_increment(char *d)
{
    uint32_t n = smp_cpus();
    lock_word = locked_count = atomic_count = 0;
    smp_run_everywhere(hammer, 0);
    uint32_t want = n * INCREMENTS;
    fmt(d, D, "%u CPUs x %u: locked %u, atomic %u (want %u)", n, INCREMENTS, locked_count, atomic_count, want);
    return locked_count == want && atomic_count == want;
}

static volatile uint32_t seen_cr0[SMP_MAX_CPUS], seen_cr3[SMP_MAX_CPUS];

static void read_paging(void *arg)
{
    (void)arg;
    uint32_t me = smp_this_cpu();
    seen_cr0[me] = read_cr0();
    seen_cr3[me] = read_cr3();
}

bool smp_test_paging_follows(char *d)
{
    if (!paging_supports(PAGESIZE_4K)) {
        fmt(d, D, "no page tables to test with");
        return true;
    }
    uint32_t n = smp_cpus(), on = 0, off = 0;
    paging_enable(PAGESIZE_4K);
    uint32_t cr3 = read_cr3();
    smp_run_everywhere(read_paging, 0);
    for (uint32_t c = 1; c < n; c++)
        on += (seen_cr0[c] & CR0_PG) && seen_cr3[c] == cr3;
    paging_disable();
    smp_run_everywhere(read_paging, 0);
    for (uint32_t c = 1; c < n; c++)
        off += !(seen_cr0[c] & CR0_PG);
    fmt(d, D, "paging on: %u of %u other CPUs on the same directory; off: %u of %u", on, n - 1, off, n - 1);
    return on == n - 1 && off == n - 1;
}

static volatile uint32_t ipis, ipi_ready;

static void count_ipi(void) { ipis = ipis + 1; }

static void take_one_ipi(void *arg)
{
    (void)arg;
    ipi_ready = 1;
    sti(); /* this CPU only, and only for the IPI gate (kernel/smp.h) */
    for (uint32_t i = 0; i < IPI_POLLS && !ipis; i++)
        cpu_pause();
    cli();
}

bool smp_test_ipi(char *d)
{
    ipis = ipi_ready = 0;
    smp_ipi_handler(count_ipi);
    smp_post(1, take_one_ipi, 0);
    for (uint32_t i = 0; i < IPI_POLLS && !ipi_ready; i++)
        cpu_pause();
    bool sent = smp_ipi_send(1);
    smp_wait(1);
    smp_ipi_handler(0);
    fmt(d, D, "IPI to CPU 1: %s, %u received", sent ? "sent" : "not sent", ipis);
    return sent && ipis == 1;
}
