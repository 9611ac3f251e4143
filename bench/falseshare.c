/* bench falseshare: Liu 2014, Figure 1.3 (and Predator's linear_regression,
 * Figure 5.2). k workers on k CPUs each update data of their own, `reps`
 * times; a sample is the time from their common start to the last one's
 * finish (bench/parallel.h). The host divides it by reps (params.reps):
 * the time per update, which does not grow with k unless the workers' data
 * share cache lines (divided here, in integers, a 1-tick increment would
 * lose its fractions).
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
 * did all its updates).
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
#else
#define QUICK_REPS CR_DEF_FALSESHARE_REPS_KERNEL
#endif

#define LINE 64u
#define OBJECT_BYTES 64u
#define OBJECT_SUMS_AT 24u /* lreg_args: tid, points, num_elems (+4 padding) */
#define OBJECT_SUMS 5u
#define SUM_BYTES 8u
#define OFFSETS 3u

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

struct share {
    uint32_t k, reps;
    enum op op;
    struct cacheline_layout at;
    uint32_t unfinished; /* workers short of reps, over all samples */
    struct parallel_tally tally;
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

static void worker(uint32_t w, void *arg)
{
    struct share *s = arg;
    volatile uint32_t *p = word_of(&s->at, w);
    if (s->at.words == 1)
        (s->op == OP_ATOMIC ? increment_atomic : increment_plain)(p, s->reps);
    else
        (s->op == OP_ATOMIC ? update_atomic : update_plain)(p, s->reps);
}

static int64_t once(void *arg)
{
    struct share *s = arg;
    for (uint32_t i = 0; i < sizeof area / sizeof(uint32_t); i++)
        ((volatile uint32_t *)area)[i] = 0;
    return parallel_run(s->k, worker, s);
}

static int64_t run_case(void *arg)
{
    struct share *s = arg;
    int64_t t = parallel_undisturbed(once, s, &s->tally);
    for (uint32_t w = 0; w < s->k; w++)
        s->unfinished += *word_of(&s->at, w) != s->reps;
    return t;
}

static void late_params(struct bench_case *c, void *arg)
{
    const struct share *s = arg;
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("unfinished", s->unfinished);
    parallel_tally_params(c, &s->tally);
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
    *bc = (struct bench_case){ .name = names[c], .subtract_overhead = true };
    bc->params[bc->nparams++] = (struct bench_param)PARAM_NUM("cpus", k);
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
                shares[c] = (struct share){ .k = k, .reps = reps, .op = (enum op)op, .at = layout_of(c) };
                describe(&cases[c], c, k, (enum op)op, reps);
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
