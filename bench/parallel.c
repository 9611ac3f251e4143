#include "bench/parallel.h"

#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/error_record.h"
#include "kernel/finish.h"
#include "kernel/smp.h"
#include "kernel/smp_cores.h"
#include "lib/fmt.h"

/* The TSC rate assumed when it is not known (too long, never too short),
 * for the start line's bound (PARALLEL_START_LINE_S: the workers' CPUs are
 * idle and spinning, so they arrive within microseconds unless one faulted). */
#define START_LINE_HZ 5000000000ull
#define SWEEP_IDS_TEXT 200 /* "0-3,5,7,...": 32 ids of up to 4 digits and their commas */

struct start_line {
    parallel_fn fn;
    void *arg;
    volatile uint32_t ready __attribute__((aligned(64)));
    volatile uint32_t go __attribute__((aligned(64)));
    volatile uint32_t disturbed;
    volatile uint32_t arrived[SMP_MAX_CPUS]; /* by worker: 1 once at the start line */
};

static struct start_line line;

struct worker {
    struct start_line *line;
    uint32_t index;
};

/* Whether the OS took this thread off its CPU since `since` for over
 * 1/PARALLEL_DISTURBED_PART of the time gone by. Nearly always nobody
 * preempted it: one system call, and the clocks only where one did (a
 * worker's finish is inside the caller's timed wait). */
static bool disturbed_since(const struct smp_thread_times *since)
{
    if (smp_preempted() == since->preempted)
        return false;
    struct smp_thread_times now;
    smp_thread_times(&now);
    uint64_t wall = now.wall_ns - since->wall_ns, run = now.run_ns - since->run_ns;
    return wall > run && (wall - run) * PARALLEL_DISTURBED_PART > wall;
}

static void worker_entry(void *p)
{
    struct worker *w = p;
    struct start_line *l = w->line;
    struct smp_thread_times since;
    smp_thread_times(&since);
    l->arrived[w->index] = 1;
    __atomic_add_fetch(&l->ready, 1, __ATOMIC_ACQ_REL);
    while (!l->go)
        cpu_pause();
    l->fn(w->index, l->arg);
    if (disturbed_since(&since))
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

/* "0-3,8,10-11": ids in runs (cut short, never overrun, when size is too small). */
static void id_ranges(char *out, uint32_t size, const uint32_t *ids, uint32_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < n && len < size;) {
        uint32_t j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        if (j == i)
            len += fmt(out + len, size - len, "%s%u", len ? "," : "", ids[i]);
        else
            len += fmt(out + len, size - len, "%s%u-%u", len ? "," : "", ids[i], ids[j]);
        i = j + 1;
    }
}

__attribute__((noreturn)) void parallel_start_line_short(const uint32_t *cpus, uint32_t k, const bool *missing,
                                                         const bool *posted, volatile uint32_t *go)
{
    char msg[300], names[SWEEP_IDS_TEXT];
    uint32_t ids[SMP_MAX_CPUS] = { 0 }, n = 0;
    for (uint32_t w = 0; w < k; w++)
        if (missing[w])
            ids[n++] = cpus[w];
    id_ranges(names, sizeof names, ids, n);
    fmt(msg, sizeof msg, "%u of %u workers did not reach the start line within %u s (CPU%s %s): the run ends rather "
        "than measure with fewer workers than asked", n, k, PARALLEL_START_LINE_S, n == 1 ? "" : "s", names);
    error_record("start_line", msg);
    *go = 1;
    for (uint32_t w = 0; w < k; w++)
        if (posted[w])
            smp_wait_within(cpus[w], PARALLEL_START_LINE_S);
    finish_run(RUN_FAIL);
}

/* Workers not posted, or posted and not at the start line (the caller, on
 * CPU 0, is never missing). */
__attribute__((noreturn)) static void start_line_short(const uint32_t *cpus, uint32_t k, const bool *posted)
{
    bool missing[SMP_MAX_CPUS] = { false };
    for (uint32_t w = 0; w < k; w++)
        missing[w] = cpus[w] != 0 && (!posted[w] || !line.arrived[w]);
    parallel_start_line_short(cpus, k, missing, posted, &line.go);
}

int64_t parallel_run_on(const uint32_t *cpus, uint32_t k, parallel_fn fn, void *arg)
{
    static struct worker workers[SMP_MAX_CPUS];
    bool posted[SMP_MAX_CPUS] = { false };
    bool caller_works = cpus[0] == 0;
    uint32_t first = caller_works ? 1 : 0, expected = k - first;
    line.fn = fn;
    line.arg = arg;
    line.ready = 0;
    line.go = 0;
    line.disturbed = 0;
    for (uint32_t w = 0; w < k; w++)
        line.arrived[w] = 0;
    bool all_posted = true;
    for (uint32_t w = first; w < k; w++) {
        workers[w] = (struct worker){ &line, w };
        posted[w] = smp_post(cpus[w], worker_entry, &workers[w]);
        all_posted &= posted[w];
    }
    /* bounded: a CPU that faulted or went silent before the start line ends
     * the run by name (start_line_short) */
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : START_LINE_HZ, t = rdtsc();
    while (all_posted && line.ready != expected && rdtsc() - t < PARALLEL_START_LINE_S * hz)
        cpu_pause();
    if (line.ready != expected)
        start_line_short(cpus, k, posted);
    struct smp_thread_times since;
    smp_thread_times(&since);
    uint64_t t0 = tsc_begin();
    line.go = 1;
    if (caller_works) {
        fn(0, arg);
        /* worker 0's own span, as the others' (its wait for them is not its work) */
        if (disturbed_since(&since))
            line.disturbed++;
    }
    for (uint32_t w = first; w < k; w++)
        smp_wait(cpus[w]);
    int64_t ticks = (int64_t)(tsc_end() - t0);
    return ticks;
}

int64_t parallel_run(uint32_t k, parallel_fn fn, void *arg)
{
    static uint32_t cpus[SMP_MAX_CPUS];
    for (uint32_t w = 0; w < k; w++)
        cpus[w] = w;
    return parallel_run_on(cpus, k, fn, arg);
}

void parallel_sweep_params(struct bench_case *c, uint32_t k)
{
    static char text[SMP_MAX_CPUS + 1][SWEEP_IDS_TEXT];
    const struct smp_summary *s = smp_summary();
    if (k > s->used)
        k = s->used;
    id_ranges(text[k], SWEEP_IDS_TEXT, s->used_ids, k);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("cpu_ids", text[k]);
    if (s->cores)
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("smt", smp_any_siblings(k));
}

int64_t parallel_undisturbed(bench_run_fn once, void *arg, struct parallel_tally *tally)
{
    int64_t ticks = once(arg);
    /* workers sharing CPUs (oversubscribe=1) are always switched out: no try would do better */
    uint32_t tries = smp_summary()->shared_cpus ? PARALLEL_TRIES : 1;
    for (; parallel_disturbed() && tries < PARALLEL_TRIES; tries++) {
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
