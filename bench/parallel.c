#include "bench/parallel.h"

#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/smp.h"

/* How long the workers may take to reach the start line (their CPUs are
 * idle and spinning: microseconds, unless one faulted); the TSC rate
 * assumed when it is not known (too long, never too short). */
#define START_LINE_S 10u
#define START_LINE_HZ 5000000000ull

struct start_line {
    parallel_fn fn;
    void *arg;
    volatile uint32_t ready __attribute__((aligned(64)));
    volatile uint32_t go __attribute__((aligned(64)));
    volatile uint32_t disturbed;
};

static struct start_line line;

struct worker {
    struct start_line *line;
    uint32_t index;
};

static void worker_entry(void *p)
{
    struct worker *w = p;
    struct start_line *l = w->line;
    uint64_t switched = smp_switched_out();
    __atomic_add_fetch(&l->ready, 1, __ATOMIC_ACQ_REL);
    while (!l->go)
        cpu_pause();
    l->fn(w->index, l->arg);
    if (smp_switched_out() != switched)
        __atomic_add_fetch(&l->disturbed, 1, __ATOMIC_ACQ_REL);
}

uint32_t parallel_disturbed(void) { return line.disturbed; }

const char *parallel_unavailable(uint32_t k)
{
    if (k > smp_cpus())
        return smp_cpus() == 1 ? "needs more than one CPU: cpus=N (tools/cleanroom run --cpus N)"
                               : "more workers than the CPUs this run has (cpus=)";
    return 0;
}

const char *parallel_needs_two(const struct config *cfg)
{
    (void)cfg;
    return parallel_unavailable(2);
}

uint64_t parallel_deadline(void)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : START_LINE_HZ;
    return rdtsc() + PARALLEL_PATIENCE_S * hz;
}

uint32_t parallel_counts(uint32_t ks[PARALLEL_COUNTS_MAX])
{
    uint32_t n = smp_cpus(), m = 0;
    for (uint32_t k = 1; k < n && m < PARALLEL_COUNTS_MAX - 1; k *= 2)
        ks[m++] = k;
    ks[m++] = n;
    return m;
}

static void nothing(uint32_t worker, void *arg)
{
    (void)worker;
    (void)arg;
}

void parallel_settle(void) { parallel_run(smp_cpus(), nothing, 0); }

int64_t parallel_run(uint32_t k, parallel_fn fn, void *arg)
{
    static struct worker workers[SMP_MAX_CPUS];
    line.fn = fn;
    line.arg = arg;
    line.ready = 0;
    line.go = 0;
    line.disturbed = 0;
    for (uint32_t w = 1; w < k; w++) {
        workers[w] = (struct worker){ &line, w };
        smp_post(w, worker_entry, &workers[w]);
    }
    /* bounded: a CPU that faulted or went silent before the start line is
     * then named by smp_wait (a fault record, or an error and the end) */
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : START_LINE_HZ, t = rdtsc();
    while (line.ready != k - 1 && rdtsc() - t < START_LINE_S * hz)
        cpu_pause();
    uint64_t switched = smp_switched_out();
    uint64_t t0 = tsc_begin();
    line.go = 1;
    fn(0, arg);
    for (uint32_t w = 1; w < k; w++)
        smp_wait(w);
    int64_t ticks = (int64_t)(tsc_end() - t0);
    if (smp_switched_out() != switched)
        line.disturbed++;
    return ticks;
}

int64_t parallel_undisturbed(bench_run_fn once, void *arg, struct parallel_tally *tally)
{
    int64_t ticks = once(arg);
    for (uint32_t tries = 1; parallel_disturbed() && tries < PARALLEL_TRIES; tries++) {
        tally->retried++;
        ticks = once(arg);
    }
    tally->disturbed += parallel_disturbed() != 0;
    return ticks;
}

void parallel_tally_params(struct bench_case *c, const struct parallel_tally *tally)
{
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("retried", tally->retried);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("disturbed", tally->disturbed);
}

void parallel_budget_start(struct parallel_budget *b, uint32_t ms)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : START_LINE_HZ;
    b->ticks = hz / 1000 * ms;
    b->t0 = rdtsc();
}

int64_t parallel_scaled(int64_t ticks, uint64_t planned, uint64_t done)
{
    if (done == planned || !done || ticks < 0)
        return ticks;
    uint64_t t = (uint64_t)ticks, q = t / done, r = t % done; /* no overflow of t * planned */
    return (int64_t)(q * planned + r * planned / done);
}
