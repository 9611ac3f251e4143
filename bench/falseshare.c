/* bench falseshare: Liu 2014, Figure 1.3 (and Predator's linear_regression,
 * Figure 5.2). k workers on k CPUs each update data of their own, `reps`
 * times. The time per update does not grow with k unless the workers' data
 * share cache lines.
 *
 * A sample is the steady state, not the run. Timed from the start to the
 * last finish, a short run of plain increments read 3 or 22-28 ticks an
 * update (k=2, 20000 of them, 2 vCPUs of an AMD EPYC): the line's ping-pong
 * settles into the bursts a store buffer commits each time the line arrives
 * only after tens of microseconds, and the run also holds the start (the
 * workers leave the start line microseconds apart) and the tail (a worker
 * that finished early no longer contends). So the first worker to finish
 * times a window on its own TSC, from its reps / EDGE_PART-th update to its
 * last, reading every worker's count at both ends: all k were updating in
 * it (each had begun, none had finished). A sample is the window's ticks
 * over the updates a worker did in it on average (the k workers'
 * throughput, not the slowest one's time), times reps, which the host
 * divides by (params.reps; divided here, in integers, a 1-tick update would
 * lose its fractions). Nothing else is in the loop: a check of a flag every
 * few thousand updates kept such runs in the ping-pong (~24 ticks where the
 * bare loop read ~3). A sample without such a window (a worker had not
 * begun at its start, or did nothing in it: an emulator's CPUs taking
 * turns, a host that took a virtual CPU away, reps too few) is the
 * start-to-last-finish time (bench/parallel.h) instead, and params.unsteady
 * counts those samples. Hosted, plain increments are PLAIN_FACTOR times
 * reps (lib/defaults.h): a sample long enough in time.
 *
 *   packed:  worker w increments the int at byte 4w: the program of Fig. 1.3,
 *            an int array with an entry per thread; 16 ints to a 64-byte
 *            line, so from k=17 on two lines (params.lines: how many lines
 *            the k workers' words span, every layout);
 *   padded:  worker w increments the int at byte 64w: each on its own line
 *            (the fix by padding, section 1.2.4);
 *   object:  worker w updates object w of an array of 64-byte objects laid
 *            out as Predator's lreg_args on a 64-bit machine (Fig. 5.6: 24
 *            bytes of thread id, points pointer and count, then five 8-byte
 *            sums), the array starting `offset` bytes into a line: each update
 *            adds 1 to the five sums (their low words: 32-bit code, no carry
 *            within reps). At offset 0 each object's sums fill one line alone;
 *            at 56 object w+1's first line holds only its (unwritten) thread
 *            id; at 24 the sums of objects w and w+1 share a line. Objects
 *            are line-sized, so none of this changes with k.
 *
 * Two ways to increment, never averaged together: `plain`, a load and a
 * store through a volatile pointer (what Fig. 1.3 compiles to; a modern
 * core's store buffer can hide much of the line's travel), and `atomic`, a
 * locked add (which cannot complete until it owns the line).
 *
 * Every case of one (k, op) is measured as one set, sample by sample. The
 * line size is taken as 64 bytes (params.line); a machine whose lines are
 * longer shares more. Each worker's count is checked after every sample:
 * params.unfinished counts the workers whose word fell short (0: every CPU
 * did all its updates). params.addrs lists each worker's word (an object's
 * first sum) at the address the workers used: the host checks from them,
 * not from the layout's intent, that packed words share a line and padded
 * ones do not.
 * A hosted sample during which the OS took a worker off its CPU is run
 * again (parallel_undisturbed: params.retried, params.disturbed). */
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/smp.h"
#include "lib/cacheline.h"
#include "lib/defaults.h"

#ifdef CLEANROOM_HOSTED
#define QUICK_REPS CR_DEF_FALSESHARE_REPS_HOSTED
#define PLAIN_FACTOR CR_DEF_FALSESHARE_PLAIN_FACTOR_HOSTED
#else
#define QUICK_REPS CR_DEF_FALSESHARE_REPS_KERNEL
#define PLAIN_FACTOR CR_DEF_FALSESHARE_PLAIN_FACTOR_KERNEL
#endif

#define LINE 64u
#define OBJECT_BYTES 64u
#define OBJECT_SUMS_AT 24u /* lreg_args: tid, points, num_elems (+4 padding) */
#define OBJECT_SUMS 5u
#define SUM_BYTES 8u
#define OFFSETS 3u
/* The window opens at the first finisher's reps / EDGE_PART-th update. */
#define EDGE_PART 4u

enum op { OP_PLAIN, OP_ATOMIC, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "plain", "atomic" };
#define OFFSET_LAST 56u
static const uint32_t offsets[OFFSETS] = { 0, 24, OFFSET_LAST };
enum { CASE_PACKED, CASE_PADDED, CASE_OBJECT, CASES = CASE_OBJECT + OFFSETS };

/* Room for every layout: SMP_MAX_CPUS objects from byte 56, and a line of
 * slack either side so that nothing else shares the first or the last. */
static uint8_t area[(SMP_MAX_CPUS + 3) * LINE] __attribute__((aligned(2 * LINE)));
_Static_assert(LINE + OFFSET_LAST + OBJECT_SUMS_AT + (SMP_MAX_CPUS - 1) * OBJECT_BYTES + OBJECT_SUMS * SUM_BYTES
                   <= sizeof area - LINE, "the last object's sums end a line before area does");

/* What the workers of one sample tell each other (a line of its own,
 * written once by each at its start and once at its end). */
struct window {
    volatile uint32_t started __attribute__((aligned(LINE))); /* workers that began */
    volatile uint32_t finished;                               /* workers that ended */
};

/* The steady window, as the first worker to finish saw it. */
struct steady {
    uint64_t ticks;   /* its TSC from the window's start to its finish */
    uint64_t updates; /* every worker's updates in that time */
    bool shared;      /* every worker had begun and updated in it */
};

struct share {
    uint32_t k, reps;
    enum op op;
    struct cacheline_layout at;
    uint32_t unfinished; /* workers short of reps, over all samples */
    uint32_t unsteady;   /* recorded samples without a window all k workers were in */
    char addrs[CACHELINE_ADDRS_TEXT(SMP_MAX_CPUS)]; /* params.addrs */
    uint32_t calls, warmup; /* runs so far, and the warm-up ones among them (not recorded) */
    bool steady;         /* the last run had one */
    struct parallel_tally tally;
    struct window win;
    struct steady got;
};

static volatile uint32_t *word_of(const struct cacheline_layout *at, uint32_t worker)
{
    return (volatile uint32_t *)(area + LINE + at->first + worker * at->step);
}

static void increment_plain(volatile uint32_t *p, uint32_t reps)
{
    for (uint32_t i = 0; i < reps; i++)
        *p = *p + 1;
}

static void increment_atomic(volatile uint32_t *p, uint32_t reps)
{
    for (uint32_t i = 0; i < reps; i++)
        __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); /* lock add */
}

/* The five sums of one lreg_args object, 8 bytes apart (uint32 index 2). */
static void update_plain(volatile uint32_t *s, uint32_t reps)
{
    for (uint32_t i = 0; i < reps; i++) {
        s[0] = s[0] + 1;
        s[2] = s[2] + 1;
        s[4] = s[4] + 1;
        s[6] = s[6] + 1;
        s[8] = s[8] + 1;
    }
}

static void update_atomic(volatile uint32_t *s, uint32_t reps)
{
    for (uint32_t i = 0; i < reps; i++) {
        __atomic_fetch_add(&s[0], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s[2], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s[4], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s[6], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s[8], 1, __ATOMIC_RELAXED);
    }
}

_Static_assert(OBJECT_SUMS == 5 && SUM_BYTES == 2 * sizeof(uint32_t), "update_* touch five sums 8 bytes apart");

typedef void (*update_fn)(volatile uint32_t *p, uint32_t n);

/* Every worker's count, read at once (volatile, each a load of another
 * CPU's line), between two TSC readings: the time of the reading is their
 * mean. */
static uint64_t counts(const struct share *s, uint32_t count[])
{
    uint64_t t0 = rdtsc();
    for (uint32_t v = 0; v < s->k; v++)
        count[v] = *word_of(&s->at, v);
    return t0 + (rdtsc() - t0) / 2;
}

/* reps updates in two stretches, nothing else in the loop (the head of the
 * file says why). Between them the worker notes the time and every worker's
 * count; the first to finish notes them again and keeps the difference.
 * Inlined with each update function (workers[]). */
static inline __attribute__((always_inline)) void updating(struct share *s, uint32_t w, update_fn update)
{
    struct window *win = &s->win;
    volatile uint32_t *p = word_of(&s->at, w);
    uint32_t opens = s->reps / EDGE_PART, before[SMP_MAX_CPUS], after[SMP_MAX_CPUS];
    __atomic_add_fetch(&win->started, 1, __ATOMIC_ACQ_REL);
    update(p, opens);
    bool all_began = win->started == s->k;
    uint64_t t0 = counts(s, before);
    update(p, s->reps - opens);
    if (__atomic_fetch_add(&win->finished, 1, __ATOMIC_ACQ_REL))
        return; /* another finished first */
    uint64_t t1 = counts(s, after);
    s->got = (struct steady){ .ticks = t1 - t0, .shared = all_began };
    for (uint32_t v = 0; v < s->k; v++) {
        s->got.updates += after[v] - before[v];
        s->got.shared &= after[v] > before[v];
    }
}

static void worker_increment_plain(uint32_t w, void *s) { updating(s, w, increment_plain); }
static void worker_increment_atomic(uint32_t w, void *s) { updating(s, w, increment_atomic); }
static void worker_update_plain(uint32_t w, void *s) { updating(s, w, update_plain); }
static void worker_update_atomic(uint32_t w, void *s) { updating(s, w, update_atomic); }
/* by the words of an update (one: an int; five: an object's sums) and op */
static const parallel_fn workers[2][OP_COUNT] = { { worker_increment_plain, worker_increment_atomic },
                                                   { worker_update_plain, worker_update_atomic } };

/* The sample: the window's ticks over the updates a worker did in it on
 * average, as ticks for reps updates; or, where not all k were updating in
 * it, start to last finish. */
static int64_t sample(struct share *s, int64_t run)
{
    s->steady = s->got.shared && s->got.updates;
    return s->steady ? parallel_scaled((int64_t)(s->got.ticks * s->k), s->reps, s->got.updates) : run;
}

static int64_t once(void *arg)
{
    struct share *s = arg;
    for (uint32_t i = 0; i < sizeof area / sizeof(uint32_t); i++)
        ((volatile uint32_t *)area)[i] = 0;
    s->win.started = s->win.finished = 0;
    s->got = (struct steady){ 0 };
    return sample(s, parallel_run(s->k, workers[s->at.words > 1][s->op], s));
}

static int64_t run_case(void *arg)
{
    struct share *s = arg;
    int64_t t = parallel_undisturbed(once, s, &s->tally);
    s->unsteady += ++s->calls > s->warmup && !s->steady;
    for (uint32_t w = 0; w < s->k; w++)
        s->unfinished += *word_of(&s->at, w) != s->reps;
    return t;
}

static void late_params(struct bench_case *c, void *arg)
{
    const struct share *s = arg;
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("unfinished", s->unfinished);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("unsteady", s->unsteady);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("addrs", s->addrs);
    parallel_tally_params(c, &s->tally);
}

/* params.addrs: every worker's word (or first sum), as word_of gives it to the workers. */
static void note_addrs(struct share *s)
{
    uint32_t at[SMP_MAX_CPUS];
    for (uint32_t w = 0; w < s->k; w++)
        at[w] = (uint32_t)(uintptr_t)word_of(&s->at, w);
    cacheline_addrs(s->addrs, sizeof s->addrs, at, s->k);
}

/* Worker 0's word (or first sum) in area after its first line, the bytes
 * to the next worker's, the words of an update and the bytes between them. */
static struct cacheline_layout layout_of(uint32_t c)
{
    if (c == CASE_PACKED)
        return (struct cacheline_layout){ 0, sizeof(uint32_t), 1, 0 };
    if (c == CASE_PADDED)
        return (struct cacheline_layout){ 0, LINE, 1, 0 };
    return (struct cacheline_layout){ offsets[c - CASE_OBJECT] + OBJECT_SUMS_AT, OBJECT_BYTES, OBJECT_SUMS,
                                      SUM_BYTES };
}

static void describe(struct bench_case *bc, uint32_t c, uint32_t k, enum op op, uint32_t reps)
{
    static const char *const names[CASES] = { "packed", "padded", "object", "object", "object" };
    /* no one timed region to take the overhead off: the window is read on the first finisher's TSC */
    *bc = (struct bench_case){ .name = names[c] };
    bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("cpus", k);
    parallel_sweep_params(bc, k);
    bc->params[bc->nparams++] = (struct bench_param)PARAM_STR("op", op_names[op]);
    bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
    bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("line", LINE);
    struct cacheline_layout at = layout_of(c);
    bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("lines", cacheline_count(&at, k, LINE));
    if (c < CASE_OBJECT)
        bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("stride", at.step);
    else
        bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("offset", offsets[c - CASE_OBJECT]);
}

/* Plain increments: PLAIN_FACTOR times reps (lib/defaults.h says why; the
 * paper suite's own count as it is), as many as a word counts at most. */
static uint32_t reps_of(const struct bench_ctx *ctx, enum op op, uint32_t reps)
{
    bool paper_count = ctx->cfg->suite == SUITE_PAPER && !ctx->cfg->given[KEY_REPS];
    uint32_t factor = op == OP_PLAIN && !paper_count ? PLAIN_FACTOR : 1;
    return reps <= UINT32_MAX / factor ? reps * factor : UINT32_MAX;
}

static void run(struct bench_ctx *ctx)
{
    uint32_t n = smp_cpus();
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_FALSESHARE_PAPER_REPS : QUICK_REPS);
    bench_plan(ctx, n * OP_COUNT * CASES);
    for (uint32_t k = 1; k <= n; k++) {
        for (uint32_t op = 0; op < OP_COUNT; op++) {
            static struct share shares[CASES];
            static struct bench_case cases[CASES];
            struct bench_item items[CASES];
            for (uint32_t c = 0; c < CASES; c++) {
                uint32_t n = reps_of(ctx, (enum op)op, reps);
                shares[c] = (struct share){ .k = k, .reps = n, .op = (enum op)op, .at = layout_of(c),
                                            .warmup = ctx->warmup };
                note_addrs(&shares[c]);
                describe(&cases[c], c, k, (enum op)op, n);
                items[c] = (struct bench_item){ .c = &cases[c], .fn = run_case, .arg = &shares[c],
                                                .late_params = late_params, .hook_arg = &shares[c] };
            }
            bench_measure_set(ctx, items, CASES);
        }
    }
}

const struct bench bench_falseshare = {
    .name = "falseshare",
    .what = "k CPUs updating their own words: one line, padded, Predator's object offsets (Liu 2014)",
    .in_smp = true,
    .unavailable = parallel_needs_two,
    .run = run,
};
