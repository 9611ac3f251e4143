#include "runtime/smplock_selftest.h"

#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/selftest.h"
#include "kernel/smp.h"
#include "lib/fmt.h"
#include "runtime/smp_selftest.h"
#include "runtime/smplock.h"

#define D SELFTEST_DETAIL_MAX
/* Each CPU increments for BUDGET_MS of its own TSC (at most MAX_INCREMENTS
 * times): a FIFO lock whose next waiter's vCPU the host has descheduled
 * (QEMU with more vCPUs than host cores) hands over once per host time
 * slice, and a fixed count would then take minutes. */
#define BUDGET_MS 20u
#define UNKNOWN_HZ 1000000000ull
#define MAX_INCREMENTS 100000u
/* Turns of the lock's own wait inside it (smplock_spin_turn: pauses, or
 * busy-loop turns for a lock whose waiters spin without pause). Under QEMU's single-threaded TCG a pause hands the host
 * thread to the next vCPU: waiters that pause hand it back at once, so the
 * CPUs interleave inside the lock (the spinblock parks); a waiter spinning
 * without pause keeps it for a whole time slice, and pauses inside made each
 * increment of the four pause-less locks last ~2 s there. */
#define HOLD 20u
#define ITEMS 500u
#define START_WAIT_S 10u
#define RW_ROUNDS 2000u

/* Each lock under test, and the spinblocks' (lock_loops, unlock_loops):
 * (0, 0) parks at once, (100, 200) spins both ways first; every release
 * rule under both. */
struct lock_case {
    enum smplock_kind kind;
    bool pause;
    uint32_t lock_loops, unlock_loops;
};

static const struct lock_case cases[] = {
    { SMPLOCK_TAS, false, 0, 0 },           { SMPLOCK_TAS, true, 0, 0 },
    { SMPLOCK_TTAS, false, 0, 0 },          { SMPLOCK_TTAS, true, 0, 0 },
    { SMPLOCK_TICKET, false, 0, 0 },        { SMPLOCK_TICKET, true, 0, 0 },
    { SMPLOCK_MCS, false, 0, 0 },           { SMPLOCK_MCS, true, 0, 0 },
    { SMPLOCK_SB_HANDOFF, true, 0, 0 },     { SMPLOCK_SB_HANDOFF, true, 100, 200 },
    { SMPLOCK_SB_BARGE, true, 0, 0 },       { SMPLOCK_SB_BARGE, true, 100, 200 },
    { SMPLOCK_SB_STARVE, true, 0, 0 },      { SMPLOCK_SB_STARVE, true, 100, 200 },
    { SMPLOCK_MUTEX, true, 0, 0 },
};
/* the condition variable's test: the release rules */
static const enum smplock_kind cond_kinds[] = { SMPLOCK_SB_HANDOFF, SMPLOCK_SB_BARGE };

static struct smplock lock;
static volatile uint32_t counter, arrived;
static volatile uint32_t mine[SMP_MAX_CPUS];

/* Every CPU waits for the others, so that the loops overlap (a CPU's short
 * loop could otherwise end before the next one has even started); at most
 * START_WAIT_S: a CPU that never comes shows as one that did nothing. */
static void start_together(void)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : UNKNOWN_HZ, t0 = rdtsc();
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    while (arrived < smp_cpus() && rdtsc() - t0 < START_WAIT_S * hz)
        cpu_pause();
}

static void hammer(void *arg)
{
    (void)arg;
    uint32_t me = smp_this_cpu();
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : UNKNOWN_HZ, budget = hz / 1000 * BUDGET_MS;
    start_together();
    uint32_t n = 0;
    for (uint64_t t0 = rdtsc(); n < MAX_INCREMENTS && rdtsc() - t0 < budget; n++) {
        smplock_acquire(&lock, me);
        uint32_t c = counter;
        for (uint32_t j = 0; j < HOLD; j++) /* a while inside: the others must queue, spinblock park */
            smplock_spin_turn(&lock);
        counter = c + 1;
        smplock_release(&lock, me);
    }
    mine[me] = n;
}

bool smplock_test_no_lost_increment(char *d)
{
    uint32_t n = smp_cpus(), parks = 0, handoffs = 0, total = 0;
    const uint32_t ncases = sizeof cases / sizeof cases[0];
    for (uint32_t i = 0; i < ncases; i++) {
        const struct lock_case *c = &cases[i];
        smplock_init(&lock, c->kind, c->pause);
        smplock_set_loops(&lock, c->lock_loops, c->unlock_loops);
        counter = arrived = 0;
        smp_run_everywhere(hammer, 0);
        parks += lock.parks;
        handoffs += lock.handoffs;
        uint32_t want = 0, idle = 0;
        for (uint32_t cpu = 0; cpu < n; cpu++) {
            want += mine[cpu];
            idle += mine[cpu] == 0;
        }
        total += want;
        if (counter != want || idle) {
            fmt(d, D, "%s (loops %u/%u): %u of %u increments on %u CPUs, %u of them none", smplock_name(c->kind, c->pause),
                c->lock_loops, c->unlock_loops, counter, want, n, idle);
            return false;
        }
        /* every CPU is done, so every park was answered by one release: a handoff or a wake-up */
        if (smplock_is_spinblock(c->kind) && lock.parks != lock.handoffs + lock.wakes) {
            fmt(d, D, "%s (loops %u/%u): %u parks, but %u handoffs and %u wake-ups", smplock_name(c->kind, true),
                c->lock_loops, c->unlock_loops, lock.parks, lock.handoffs, lock.wakes);
            return false;
        }
    }
    fmt(d, D, "%u locks, %u CPUs, %u ms each: %u increments, none lost (spinblocks and mutex parked %u times, "
        "%u handoffs)", ncases, n, BUDGET_MS, total, parks, handoffs);
    return true;
}

/* --- producer and consumer --------------------------------------------------------- */

static struct smpcond full, taken;
static volatile uint32_t data, valid, in_order;

static void consume(void *arg)
{
    (void)arg;
    uint32_t me = smp_this_cpu();
    for (uint32_t i = 0; i < ITEMS; i++) {
        smplock_acquire(&lock, me);
        while (!valid)
            smpcond_wait(&full, &lock, me);
        in_order = in_order + (data == i);
        valid = 0;
        smpcond_signal(&taken);
        smplock_release(&lock, me);
    }
}

bool smplock_test_condvar_handoff(char *d)
{
    uint32_t parks = 0;
    for (uint32_t k = 0; k < sizeof cond_kinds / sizeof cond_kinds[0]; k++) {
        smplock_init(&lock, cond_kinds[k], true);
        smpcond_init(&full);
        smpcond_init(&taken);
        data = valid = in_order = 0;
        smp_post(1, consume, 0);
        for (uint32_t i = 0; i < ITEMS; i++) {
            smplock_acquire(&lock, 0);
            while (valid)
                smpcond_wait(&taken, &lock, 0);
            data = i;
            valid = 1;
            smpcond_signal(&full);
            smplock_release(&lock, 0);
        }
        smp_wait(1);
        parks += lock.parks;
        if (in_order != ITEMS) {
            fmt(d, D, "%s: %u items from CPU 0 to CPU 1, %u arrived in order", smplock_name(cond_kinds[k], true), ITEMS,
                in_order);
            return false;
        }
    }
    fmt(d, D, "%u items from CPU 0 to CPU 1 under each release rule: all arrived in order (%u parks)", ITEMS, parks);
    return true;
}

/* --- reader-writer ------------------------------------------------------------------- */

static struct smprw rw;
static volatile uint32_t left, right, torn;

static void rw_body(void *arg)
{
    (void)arg;
    start_together();
    for (uint32_t i = 0; i < RW_ROUNDS; i++) {
        if (i & 1) {
            smprw_write_lock(&rw);
            left = left + 1;
            right = right + 1;
            smprw_write_unlock(&rw);
        } else {
            smprw_read_lock(&rw);
            if (left != right)
                __atomic_add_fetch(&torn, 1, __ATOMIC_RELAXED);
            smprw_read_unlock(&rw);
        }
    }
}

bool smplock_test_rw_exclusion(char *d)
{
    uint32_t n = smp_cpus(), want = n * (RW_ROUNDS / 2);
    smprw_init(&rw);
    left = right = torn = arrived = 0;
    smp_run_everywhere(rw_body, 0);
    fmt(d, D, "%u CPUs: %u of %u writes, %u torn reads, word %x at the end", n, left, want, torn, rw.word);
    return left == want && right == want && torn == 0 && rw.word == 0;
}
