/* bench isolation: the mechanism by which Dthreads, Sheriff and PATHREADS
 * make false sharing go away (Liu 2014, chapters 3-4; Zhang & Chen): each
 * thread writes a private copy of the shared page, and the copies are
 * merged at synchronisation points. k workers on k CPUs each increment
 * their own int, `reps` times, the ints packed 4 bytes apart in one page
 * (the falsely shared layout of bench falseshare's `packed`: one line up to
 * 16 CPUs, two from 17 on; params.lines says how many):
 *
 *   shared:   threads of one address space: every CPU's stores go to the
 *             one frame, and its line travels between the CPUs;
 *   isolated: each CPU in an address space of its own, in which the page
 *             is a private frame (runtime/pageview.h). Every `commit_every`
 *             updates the workers meet at a barrier; each commits the words
 *             where its copy differs from its twin (the page as it was at
 *             the last barrier) into the shared frame, a word-by-word diff as
 *             Dthreads and Sheriff do; a second barrier; then each refreshes
 *             its copy and its twin from the shared frame;
 *   padded:   threads of one address space with each int on a line of its
 *             own: the fix by hand, the bound isolation can approach.
 *
 * Kernel: ring 0, a page directory per CPU (the isolation is the address
 * space and the commit, not the ring). Hosted: threads of one process, each
 * with its own frame (a process's threads share their page tables): the
 * same frames and commits, not the same TLB. Between commits nothing is
 * write-protected, so the first-write fault Dthreads and Sheriff take per
 * dirtied page and transaction is not in these numbers (bench aspace's
 * pf_roundtrip and twin measure it on one CPU).
 *
 * The case set of one (k, op) is measured sample by sample; op is plain or
 * atomic as in falseshare; a sample is the whole run, which the host
 * divides by reps. After every sample the shared frame must hold
 * each worker's full count: params.lost counts the words that did not
 * (over every sample; 0: the commits merged every worker's words). Before
 * the isolated cases of each k, every worker writes a mark of its own into
 * the last word of its view and reads it back after all have written, and
 * from its private frame: params.leaked counts the workers that saw
 * another's mark (0: each CPU had a page of its own at the address).
 * params.addrs lists the address each worker increments through its view
 * (falseshare's, for the host to check which ints share a line).
 * A hosted sample during which the OS took a worker off its CPU is run
 * again (parallel_undisturbed: params.retried, params.disturbed). */
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "lib/cacheline.h"
#include "lib/defaults.h"
#include "lib/string.h"
#include "runtime/pageview.h"

#ifdef CLEANROOM_HOSTED
#define QUICK_REPS CR_DEF_ISOLATION_REPS_HOSTED
#else
#define QUICK_REPS CR_DEF_ISOLATION_REPS_KERNEL
#endif
/* Increments between commits: those below reps, and reps itself (one
 * commit, at the end: isolation's best case). */
#define COMMIT_EVERY { 100u, 1000u, 10000u, 100000u }
#define COMMITS 5u

#define MARK 0x15a0u /* check_private's mark, plus the worker */
#define PAGE 4096u
#define PAGE_WORDS (PAGE / sizeof(uint32_t))
#define LINE 64u
/* padded puts worker w's int at byte 64w: every CPU's, and check_private's
 * mark in the last word, fit the page */
_Static_assert(SMP_MAX_CPUS * LINE <= PAGE - sizeof(uint32_t), "padded ints and the mark in one page");

enum op { OP_PLAIN, OP_ATOMIC, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "plain", "atomic" };
enum kind { PADDED, SHARED, ISOLATED };
#define CASES (2u + COMMITS)

struct barrier {
    volatile uint32_t count __attribute__((aligned(LINE)));
    volatile uint32_t sense __attribute__((aligned(LINE)));
    volatile uint32_t broken;
    uint32_t n;
};

/* The page and its views, made once per run of the benchmark. */
struct world {
    volatile uint32_t *shared;          /* the shared frame, where commits go */
    uint32_t *twin[SMP_MAX_CPUS];       /* each worker's twin of the page */
    struct pageview one;                /* the shared frame, for every CPU */
    struct pageview own[SMP_MAX_CPUS];  /* each worker's private frame */
    volatile uint32_t *frame[SMP_MAX_CPUS]; /* the private frames (identity) */
};

struct iso {
    struct world *world;
    uint32_t k, reps, every;
    enum op op;
    enum kind kind;
    struct barrier bar;
    uint32_t lost;
    uint32_t leaked; /* isolated: workers whose view was not private (check_private) */
    char addrs[CACHELINE_ADDRS_TEXT(SMP_MAX_CPUS)]; /* params.addrs */
    struct parallel_tally tally;
};

/* Sense-reversing; false when the wait gave up (another CPU stopped coming:
 * a fault, which smp_wait then names), and then for every later wait. */
static bool barrier_wait(struct barrier *b, uint32_t *sense, uint64_t deadline)
{
    uint32_t s = *sense ^ 1;
    *sense = s;
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
        b->count = 0;
        __atomic_store_n(&b->sense, s, __ATOMIC_RELEASE);
        return true;
    }
    for (uint32_t spins = 1; b->sense != s; spins++) {
        cpu_pause();
        if (b->broken || (spins % 1024 == 0 && rdtsc() > deadline)) {
            b->broken = 1;
            return false;
        }
    }
    return true;
}

/* Worker w's int in a page (or a view of it): 4 bytes apart, or a line each (padded). */
static volatile uint32_t *int_of(volatile uint32_t *page, enum kind kind, uint32_t w)
{
    return page + (kind == PADDED ? w * (LINE / sizeof(uint32_t)) : w);
}

static void bump(volatile uint32_t *p, uint32_t n, enum op op)
{
    if (op == OP_ATOMIC)
        for (uint32_t i = 0; i < n; i++)
            __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
    else
        for (uint32_t i = 0; i < n; i++)
            *p = *p + 1;
}

/* Dthreads' commit: the words this copy changed since its twin. */
static void commit(volatile uint32_t *copy, const uint32_t *twin, volatile uint32_t *shared)
{
    for (uint32_t i = 0; i < PAGE_WORDS; i++)
        if (copy[i] != twin[i])
            shared[i] = copy[i];
}

static void refresh(volatile uint32_t *copy, uint32_t *twin, const volatile uint32_t *shared)
{
    for (uint32_t i = 0; i < PAGE_WORDS; i++)
        copy[i] = twin[i] = shared[i];
}

static void worker(uint32_t w, void *arg)
{
    struct iso *s = arg;
    struct world *wd = s->world;
    uint32_t before, sense = 0;
    volatile uint32_t *page = pageview_enter(s->kind == ISOLATED ? &wd->own[w] : &wd->one, &before);
    volatile uint32_t *mine = int_of(page, s->kind, w);
    if (s->kind != ISOLATED) {
        bump(mine, s->reps, s->op);
    } else {
        uint64_t deadline = parallel_deadline();
        for (uint32_t done = 0; done < s->reps; done += s->every) {
            bump(mine, s->reps - done < s->every ? s->reps - done : s->every, s->op);
            if (!barrier_wait(&s->bar, &sense, deadline))
                break;
            commit(page, wd->twin[w], wd->shared);
            if (!barrier_wait(&s->bar, &sense, deadline))
                break;
            refresh(page, wd->twin[w], wd->shared);
        }
    }
    pageview_leave(before);
}

static int64_t once(void *arg)
{
    struct iso *s = arg;
    struct world *wd = s->world;
    for (uint32_t i = 0; i < PAGE_WORDS; i++)
        wd->shared[i] = 0;
    for (uint32_t w = 0; w < s->k; w++)
        for (uint32_t i = 0; i < PAGE_WORDS; i++)
            wd->frame[w][i] = wd->twin[w][i] = 0;
    s->bar = (struct barrier){ .n = s->k };
    return parallel_run(s->k, worker, s);
}

static int64_t run_case(void *arg)
{
    struct iso *s = arg;
    struct world *wd = s->world;
    int64_t t = parallel_undisturbed(once, s, &s->tally);
    for (uint32_t w = 0; w < s->k; w++)
        s->lost += *int_of(wd->shared, s->kind, w) != s->reps;
    return t;
}

/* Each worker marks the last word of its own view, waits for the others'
 * marks, and checks that its view and its private frame show its mark. */
static void mark_own(uint32_t w, void *arg)
{
    struct iso *s = arg;
    struct world *wd = s->world;
    uint32_t before, sense = 0;
    volatile uint32_t *page = pageview_enter(&wd->own[w], &before);
    page[PAGE_WORDS - 1] = MARK + w;
    barrier_wait(&s->bar, &sense, parallel_deadline());
    if (page[PAGE_WORDS - 1] != MARK + w || wd->frame[w][PAGE_WORDS - 1] != MARK + w)
        __atomic_add_fetch(&s->leaked, 1, __ATOMIC_ACQ_REL);
    pageview_leave(before);
}

static uint32_t check_private(struct world *wd, uint32_t k)
{
    static struct iso check;
    check = (struct iso){ .world = wd, .k = k, .bar = { .n = k } };
    parallel_run(k, mark_own, &check);
    return check.leaked;
}

static void late_params(struct bench_case *c, void *arg)
{
    const struct iso *s = arg;
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("lost", s->lost);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("addrs", s->addrs);
    if (s->kind == ISOLATED)
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("leaked", s->leaked);
    parallel_tally_params(c, &s->tally);
}

/* params.addrs: the int each worker increments, at the address its view shows it. */
static void note_addrs(struct iso *s)
{
    uint32_t at[SMP_MAX_CPUS];
    for (uint32_t w = 0; w < s->k; w++) {
        const struct pageview *v = s->kind == ISOLATED ? &s->world->own[w] : &s->world->one;
        at[w] = (uint32_t)(uintptr_t)int_of((volatile uint32_t *)v->va, s->kind, w);
    }
    cacheline_addrs(s->addrs, sizeof s->addrs, at, s->k);
}

static void *page(void) { return memory_alloc(PAGE, PAGE); }

/* The shared frame, a page address for the views (never touched through
 * the identity map), a private frame and a twin per CPU, and the views. */
static bool make_world(struct world *wd, uint32_t n)
{
    void *va = page();
    wd->shared = page();
    if (!va || !wd->shared || !pageview_make(&wd->one, va, (void *)wd->shared))
        return false;
    for (uint32_t w = 0; w < n; w++) {
        wd->frame[w] = page();
        wd->twin[w] = page();
        if (!wd->frame[w] || !wd->twin[w] || !pageview_make(&wd->own[w], va, (void *)wd->frame[w]))
            return false;
    }
    return true;
}

static void describe(struct bench_case *c, const struct iso *s, uint32_t reps)
{
    static const char *const names[] = { "padded", "shared", "isolated" };
    /* the ints' layout in the page: 4 bytes apart (16 to a line), or a line each */
    struct cacheline_layout layout = { 0, s->kind == PADDED ? LINE : sizeof(uint32_t), 1, 0 };
    *c = (struct bench_case){ .name = names[s->kind], .subtract_overhead = true };
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("cpus", s->k);
    parallel_sweep_params(c, s->k);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("op", op_names[s->op]);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("lines", cacheline_count(&layout, s->k, LINE));
    if (s->kind == ISOLATED) {
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("commit_every", s->every);
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("commits", (reps + s->every - 1) / s->every);
    }
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("pagesize", "4k"); /* the views' pages */
}

static void run(struct bench_ctx *ctx)
{
    static const uint32_t intervals[] = COMMIT_EVERY;
    static struct world wd;
    static struct iso isos[CASES];
    static struct bench_case cases[CASES];
    _Static_assert(sizeof intervals / sizeof intervals[0] + 1 == COMMITS, "COMMITS: the intervals and reps");
    uint32_t n = smp_cpus(), every[COMMITS], ncases = 2;
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_ISOLATION_PAPER_REPS : QUICK_REPS);
    for (uint32_t i = 0; i < sizeof intervals / sizeof intervals[0] && intervals[i] < reps; i++)
        every[ncases++ - 2] = intervals[i];
    every[ncases++ - 2] = reps;
    bench_plan(ctx, n * OP_COUNT * ncases);
    const char *why = pageview_unavailable();
    struct region_mark mark;
    memory_mark(&mark);
    if (!why && !make_world(&wd, n))
        why = "no memory for the page, its copies and their page tables";
    for (uint32_t k = 1; k <= n; k++) {
        uint32_t leaked = why ? 0 : check_private(&wd, k);
        for (uint32_t op = 0; op < OP_COUNT; op++) {
            struct bench_item items[CASES];
            for (uint32_t c = 0; c < ncases; c++) {
                enum kind kind = c == 0 ? PADDED : c == 1 ? SHARED : ISOLATED;
                isos[c] = (struct iso){ .world = &wd, .k = k, .reps = reps,
                                        .every = kind == ISOLATED ? every[c - 2] : reps, .op = (enum op)op,
                                        .kind = kind, .leaked = leaked };
                note_addrs(&isos[c]);
                describe(&cases[c], &isos[c], reps);
                items[c] = (struct bench_item){ .c = &cases[c], .fn = run_case, .arg = &isos[c],
                                                .late_params = late_params, .hook_arg = &isos[c] };
                if (why)
                    bench_skip(ctx, cases[c].name, why);
            }
            if (!why)
                bench_measure_set(ctx, items, ncases);
        }
    }
    memory_release(&mark);
}

const struct bench bench_isolation = {
    .name = "isolation",
    .what = "false sharing in one address space vs isolated spaces with twin/diff commits (Dthreads, PATHREADS)",
    .in_smp = true,
#ifndef CLEANROOM_HOSTED
    .needs_paging = true, /* a page directory per CPU; hosted, the host's paging */
#endif
    .unavailable = parallel_needs_two,
    .run = run,
};
