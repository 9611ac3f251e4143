/* bench smplocks: locks between CPUs (runtime/smplock.h), worker w on CPU w
 * (bench/parallel.h).
 *
 *   pause        one `pause` on one CPU: what a turn of the spin loops
 *                below costs, so that lock_loops and unlock_loops read as time
 *   contended    k workers take the lock, increment one shared counter and
 *                let go, until it reaches k x reps between them: time per
 *                lock+unlock over all of them, for every lock and k = 1, 2,
 *                4, ... up to the run's CPUs; each worker's own count tells
 *                how fair the lock was (a fair share is reps)
 *   sweep        the same with the spin-then-block locks' two release rules
 *                under every (lock_loops, unlock_loops) of the sweep
 *                (lib/defaults.h) and starve under its first, at k = 2 and
 *                at all CPUs, NPTL's algorithm (and hosted glibc's mutexes)
 *                in the same set
 *   handoff      CPUs 0 and 1 take turns through the lock (a turn word
 *                inside it): time per handoff of the lock from one to the other
 *   litethreads  LiteThreads' producer-consumer double handshake (bench locks'
 *                one-CPU case) with the producer on CPU 0 and the consumer on
 *                CPU 1, as in the report's tables 14-21, under its
 *                (lock_loops, unlock_loops) settings, both release rules
 *   valchanov    Valchanov & Andreev's 5 threads x lock/unlock with the
 *                workers on separate CPUs (5 where there are 5, else as many
 *                as there are: params.threads), beside 5 fibers on one CPU
 *                with the fiber mutex (their user-space library)
 *
 * The spin-then-block locks spin lock_loops times, then park; they differ
 * in their release rule: spinblock_handoff hands the lock to the first
 * parked waiter while it still sleeps, spinblock_barge wakes it to compete,
 * spinblock_starve barges unless that waiter has been parked over
 * CR_DEF_SMPLOCKS_STARVE_US. mutex is NPTL's algorithm (block at once, wake
 * one, no handoff). Hosted, glibc's own pthread_mutex and pthread_adaptive
 * (bench/glibclocks.h) are in every set beside them; the kernel's sets
 * simply lack them. In the kernel blocking is polling a word of one's own,
 * hosted a futex (params.park, kernel/park.h).
 *
 * Every record says params.cpus (the CPUs working), params.lost (increments
 * or items the lock lost: 0, else an error record names the lock) and
 * params.cut (samples that reached the time limit and were scaled to the
 * planned count, bench/parallel.h: where CPUs are host threads). Over every
 * sample (warm-up included): done_min and done_max, the fewest and most
 * lock+unlocks one worker completed in a sample on average (contended,
 * sweep, valchanov: a fair share is reps); for the locks that park,
 * parks_permille (lock calls that parked) and for the spinblocks
 * handoffs_permille (releases that handed the lock to a parked waiter), per
 * 1000 operations. */
#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/glibclocks.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/error_record.h"
#include "kernel/memory.h"
#include "kernel/park.h"
#include "kernel/smp.h"
#include "lib/defaults.h"
#include "lib/fmt.h"
#include "lib/string.h"
#include "runtime/fiber.h"
#include "runtime/smplock.h"
#include "runtime/sync.h"
#include "runtime/userprims.h"

#ifdef CLEANROOM_HOSTED
#define QUICK_REPS CR_DEF_SMPLOCKS_REPS_HOSTED
#else
#define QUICK_REPS CR_DEF_SMPLOCKS_REPS_KERNEL
#endif
#define VALCHANOV_THREADS 5
#define LITE_ITEM_DIVISOR 10 /* litethreads: reps / this items (each is two handshakes) */
#define SPIN CR_DEF_SMPLOCKS_SPIN_LOOPS

enum lock_family { FAMILY_SMPLOCK, FAMILY_GLIBC, FAMILY_USER /* the user's (--lock-file, runtime/userprims.h) */ };
enum { IN_VALCHANOV = 1, IN_SWEEP = 2 }; /* besides contended and handoff, which have every lock */

struct lock_spec {
    enum lock_family family;
    uint32_t kind; /* enum smplock_kind, or enum glibclock_kind */
    bool pause;
    uint32_t lock_loops, unlock_loops;
    uint32_t in;
};

static const struct lock_spec specs[] = {
    { FAMILY_SMPLOCK, SMPLOCK_TAS, false, 0, 0, IN_VALCHANOV },
    { FAMILY_SMPLOCK, SMPLOCK_TAS, true, 0, 0, 0 },
    { FAMILY_SMPLOCK, SMPLOCK_TTAS, false, 0, 0, 0 },
    { FAMILY_SMPLOCK, SMPLOCK_TTAS, true, 0, 0, 0 },
    { FAMILY_SMPLOCK, SMPLOCK_TICKET, false, 0, 0, IN_VALCHANOV },
    { FAMILY_SMPLOCK, SMPLOCK_TICKET, true, 0, 0, 0 },
    { FAMILY_SMPLOCK, SMPLOCK_MCS, false, 0, 0, IN_VALCHANOV },
    { FAMILY_SMPLOCK, SMPLOCK_MCS, true, 0, 0, 0 },
    { FAMILY_SMPLOCK, SMPLOCK_MUTEX, true, 0, 0, IN_VALCHANOV | IN_SWEEP },
    { FAMILY_SMPLOCK, SMPLOCK_SB_HANDOFF, true, SPIN, 0, IN_VALCHANOV },
    { FAMILY_SMPLOCK, SMPLOCK_SB_BARGE, true, SPIN, 0, IN_VALCHANOV },
    { FAMILY_SMPLOCK, SMPLOCK_SB_STARVE, true, SPIN, 0, 0 },
#ifdef CLEANROOM_HOSTED /* glibc's mutexes: a C library's, the hosted build's only */
    { FAMILY_GLIBC, GLIBCLOCK_DEFAULT, true, 0, 0, IN_VALCHANOV | IN_SWEEP },
    { FAMILY_GLIBC, GLIBCLOCK_ADAPTIVE, true, 0, 0, IN_VALCHANOV | IN_SWEEP },
#endif
};
#define NSPECS (sizeof specs / sizeof specs[0] + 1) /* the user's lock after them, where given */
static const uint32_t sweep_lock[] = CR_DEF_SMPLOCKS_SWEEP_LOCK_LOOPS;
static const uint32_t sweep_unlock[] = CR_DEF_SMPLOCKS_SWEEP_UNLOCK_LOOPS;
#define NSWEEP_LOOPS (sizeof sweep_lock / sizeof sweep_lock[0] * (sizeof sweep_unlock / sizeof sweep_unlock[0]))
static const enum smplock_kind rules[] = { SMPLOCK_SB_HANDOFF, SMPLOCK_SB_BARGE }; /* the sweep's and litethreads' */
#define NRULES (sizeof rules / sizeof rules[0])
#define MAX_SET (NRULES * NSWEEP_LOOPS + 1 + NSPECS) /* the largest set: the sweep and its references */
static const uint32_t lite[][2] = { { 0, 0 }, { 100, 0 }, { 0, 200 }, { 100, 200 } };
#define NLITE (sizeof lite / sizeof lite[0])

static const char *spec_name(const struct lock_spec *s)
{
    if (s->family == FAMILY_USER)
        return "user";
    if (s->family == FAMILY_GLIBC)
        return s->kind == GLIBCLOCK_ADAPTIVE ? "pthread_adaptive" : "pthread_mutex";
    return smplock_name((enum smplock_kind)s->kind, s->pause);
}

static bool spec_blocks(const struct lock_spec *s)
{
    return s->family == FAMILY_GLIBC || (s->family == FAMILY_SMPLOCK && smplock_blocks((enum smplock_kind)s->kind));
}

static bool spec_spinblock(const struct lock_spec *s)
{
    return s->family == FAMILY_SMPLOCK && smplock_is_spinblock((enum smplock_kind)s->kind);
}

/* How often a lock parked (and a spinblock handed over), per 1000 operations. */
struct park_tally {
    uint64_t parks, handoffs, ops;
};

static uint64_t permille(uint64_t n, uint64_t ops) { return ops ? n * 1000 / ops : 0; }

/* Counts what one sample of `ops` operations on l added. */
static void tally_sample(struct park_tally *t, const struct smplock *l, uint32_t parks, uint32_t handoffs,
                         uint64_t ops)
{
    t->parks += l->parks - parks;
    t->handoffs += l->handoffs - handoffs;
    t->ops += ops;
}

/* --- k workers on one lock ------------------------------------------------------------ */

struct crowd {
    void *user; /* the user's lock object (FAMILY_USER) */
    struct smplock lock;
    struct glibclock glock;
    struct lock_spec spec;
    uint32_t k, reps;
    bool turns;                     /* handoff: take turns, else contend */
    volatile uint32_t counter __attribute__((aligned(64)));
    volatile uint32_t turn;
    uint32_t done[SMP_MAX_CPUS] __attribute__((aligned(64))); /* each worker's count, written at its end */
    uint64_t done_all[SMP_MAX_CPUS]; /* each worker's counts over the samples */
    uint32_t lost, cut, samples;
    struct park_tally tally;
};

static struct crowd crowds[MAX_SET];
static void *user_objs[MAX_SET]; /* a user's lock object per crowd, where a lock of the user's is given */

static inline void take(struct crowd *c, uint32_t w)
{
    if (c->spec.family == FAMILY_USER) {
        user_lock()->lock(c->user, w);
        return;
    }
#ifdef CLEANROOM_HOSTED
    if (c->spec.family == FAMILY_GLIBC) {
        glibclock_acquire(&c->glock);
        return;
    }
#endif
    smplock_acquire(&c->lock, w);
}

static inline void give(struct crowd *c, uint32_t w)
{
    if (c->spec.family == FAMILY_USER) {
        user_lock()->unlock(c->user, w);
        return;
    }
#ifdef CLEANROOM_HOSTED
    if (c->spec.family == FAMILY_GLIBC) {
        glibclock_release(&c->glock);
        return;
    }
#endif
    smplock_release(&c->lock, w);
}

static void crowd_init(struct crowd *c, const struct lock_spec *s)
{
    c->spec = *s;
#ifdef CLEANROOM_HOSTED
    if (s->family == FAMILY_GLIBC)
        glibclock_init(&c->glock, (enum glibclock_kind)s->kind);
#endif
    smplock_init(&c->lock, s->family == FAMILY_SMPLOCK ? (enum smplock_kind)s->kind : SMPLOCK_TAS, s->pause);
    smplock_set_loops(&c->lock, s->lock_loops, s->unlock_loops);
    if (s->family == FAMILY_USER) {
        memset(c->user, 0, user_lock()->size);
        user_lock()->init(c->user, smp_cpus());
    }
}

/* Until the workers' increments reach k x reps between them (one more
 * lock+unlock each sees that, and is not counted). */
static void contend(uint32_t w, void *arg)
{
    struct crowd *c = arg;
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint32_t target = c->k * c->reps, mine = 0;
    for (uint32_t i = 0; parallel_budget_left(&b, i); i++) {
        take(c, w);
        uint32_t n = c->counter;
        if (n < target)
            c->counter = n + 1;
        give(c, w);
        if (n >= target)
            break;
        mine++;
    }
    c->done[w] = mine;
}

/* Two workers, each taking the lock until it finds its turn and passing it on. */
static void take_turns(uint32_t w, void *arg)
{
    struct crowd *c = arg;
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint32_t mine = 0;
    for (uint32_t i = 0; mine < c->reps && parallel_budget_left(&b, i); i++) {
        take(c, w);
        if (c->turn == w) {
            c->turn = 1 - w;
            mine++;
        }
        give(c, w);
    }
    c->done[w] = mine;
}

static int64_t run_crowd(void *arg)
{
    struct crowd *c = arg;
    c->counter = c->turn = 0;
    uint32_t parks = c->lock.parks, handoffs = c->lock.handoffs;
    int64_t t = parallel_run(c->k, c->turns ? take_turns : contend, c);
    uint64_t done = 0;
    for (uint32_t w = 0; w < c->k; w++) {
        done += c->done[w];
        c->done_all[w] += c->done[w];
    }
    c->samples++;
    if (c->turns) /* strict alternation: CPU 0 is never more than one turn ahead */
        c->lost += c->done[0] != c->done[1] && c->done[0] != c->done[1] + 1;
    else
        c->lost += (uint32_t)(done - c->counter);
    tally_sample(&c->tally, &c->lock, parks, handoffs, done);
    uint64_t planned = (uint64_t)c->k * c->reps;
    c->cut += done < planned;
    return parallel_scaled(t, planned, done);
}

static void add(struct bench_case *c, struct bench_param p) { c->params[c->nparams++] = p; }

static void lost_error(const char *what, const char *lock, uint32_t k, uint32_t lost)
{
    char msg[160];
    fmt(msg, sizeof msg, "smplocks %s: %s with %u CPUs lost %u of its updates: the lock let two CPUs in at once", what,
        lock, k, lost);
    error_record("smplock_lost", msg);
}

/* lost, cut, and how often the lock parked and handed over */
static void outcome_params(struct bench_case *c, const struct lock_spec *s, uint32_t lost, uint32_t cut,
                           const struct park_tally *t)
{
    add(c, (struct bench_param)PARAM_NUM("lost", lost));
    add(c, (struct bench_param)PARAM_NUM("cut", cut));
    if (s->family == FAMILY_SMPLOCK && spec_blocks(s))
        add(c, (struct bench_param)PARAM_NUM("parks_permille", permille(t->parks, t->ops)));
    if (spec_spinblock(s))
        add(c, (struct bench_param)PARAM_NUM("handoffs_permille", permille(t->handoffs, t->ops)));
}

static void crowd_params(struct bench_case *c, void *hook_arg)
{
    struct crowd *cr = hook_arg;
    outcome_params(c, &cr->spec, cr->lost, cr->cut, &cr->tally);
    if (!cr->turns && cr->samples) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint32_t w = 0; w < cr->k; w++) {
            lo = cr->done_all[w] < lo ? cr->done_all[w] : lo;
            hi = cr->done_all[w] > hi ? cr->done_all[w] : hi;
        }
        add(c, (struct bench_param)PARAM_NUM("done_min", lo / cr->samples));
        add(c, (struct bench_param)PARAM_NUM("done_max", hi / cr->samples));
    }
    if (cr->lost)
        lost_error(c->name, spec_name(&cr->spec), cr->k, cr->lost);
}

static void spec_params(struct bench_case *c, const struct lock_spec *s)
{
    add(c, (struct bench_param)PARAM_STR("lock", spec_name(s)));
    if (spec_spinblock(s)) {
        add(c, (struct bench_param)PARAM_NUM("lock_loops", s->lock_loops));
        add(c, (struct bench_param)PARAM_NUM("unlock_loops", s->unlock_loops));
        add(c, (struct bench_param)PARAM_NUM("backoff", CR_DEF_SMPLOCKS_BACKOFF_MAX));
    }
    if (s->family == FAMILY_SMPLOCK && s->kind == SMPLOCK_SB_STARVE)
        add(c, (struct bench_param)PARAM_NUM("starve_us", CR_DEF_SMPLOCKS_STARVE_US));
    if (spec_blocks(s))
        add(c, (struct bench_param)PARAM_STR("park", park_kind()));
}

/* The locks `set` with k workers, measured in turn. */
static void measure_crowds(struct bench_ctx *ctx, const char *name, const struct lock_spec *set, uint32_t n,
                           uint32_t k, uint32_t reps, bool turns)
{
    static struct bench_case cases[MAX_SET];
    static struct bench_item items[MAX_SET];
    for (uint32_t j = 0; j < n; j++) {
        struct crowd *cr = &crowds[j];
        cr->user = user_objs[j];
        crowd_init(cr, &set[j]);
        cr->k = k;
        cr->reps = reps;
        cr->turns = turns;
        cr->lost = cr->cut = cr->samples = 0;
        for (uint32_t w = 0; w < k; w++)
            cr->done_all[w] = 0;
        cr->tally = (struct park_tally){ 0, 0, 0 };
        cases[j] = (struct bench_case){ .name = name, .per = (uint64_t)k * reps };
        spec_params(&cases[j], &set[j]);
        if (set[j].family == FAMILY_USER)
            add(&cases[j], (struct bench_param)PARAM_STR("code", user_lock()->name));
        add(&cases[j], (struct bench_param)PARAM_NUM("cpus", k));
        parallel_sweep_params(&cases[j], k);
        add(&cases[j], (struct bench_param)PARAM_NUM("reps", reps));
        if (str_eq(name, "valchanov"))
            add(&cases[j], (struct bench_param)PARAM_NUM("threads", k));
        items[j] = (struct bench_item){ .c = &cases[j], .fn = run_crowd, .arg = cr, .late_params = crowd_params,
                                        .hook_arg = cr };
    }
    bench_measure_set(ctx, items, n);
}

/* The user's lock, checked once (runtime/userprims.h): given and fit to measure. */
static bool user_ok;

/* The specs that are `in` (all of them for 0), the user's lock last where given (contended, handoff and
 * Valchanov's test: not the sweep, whose knobs are the spin-then-block locks'). */
static uint32_t pick(struct lock_spec *out, uint32_t in)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < NSPECS - 1; j++)
        if (!in || (specs[j].in & in))
            out[n++] = specs[j];
    if (user_ok && (!in || in == IN_VALCHANOV))
        out[n++] = (struct lock_spec){ FAMILY_USER, 0, false, 0, 0, IN_VALCHANOV };
    return n;
}

/* Both release rules under every setting of the sweep; starve where waiters
 * park at once (the first setting), where a barging lock can starve one;
 * then the references. */
static uint32_t sweep_set(struct lock_spec *out)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < NRULES; r++)
        for (uint32_t a = 0; a < sizeof sweep_lock / sizeof sweep_lock[0]; a++)
            for (uint32_t b = 0; b < sizeof sweep_unlock / sizeof sweep_unlock[0]; b++)
                out[n++] = (struct lock_spec){ FAMILY_SMPLOCK, rules[r], true, sweep_lock[a], sweep_unlock[b], 0 };
    out[n++] = (struct lock_spec){ FAMILY_SMPLOCK, SMPLOCK_SB_STARVE, true, sweep_lock[0], sweep_unlock[0], 0 };
    return n + pick(out + n, IN_SWEEP);
}

/* --- the LiteThreads producer-consumer on two CPUs ------------------------------------------ */

struct handshake {
    struct smplock m;
    struct smpcond full, ack_cv;
    struct lock_spec spec;
    uint32_t items;
    volatile uint32_t data, valid, ack, last, received, produced;
    uint32_t lost, cut;
    struct park_tally tally;
};

static struct handshake handshakes[NRULES];

static void producer(struct handshake *h)
{
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    for (uint32_t i = 0;; i++) {
        bool final = i + 1 >= h->items || !parallel_budget_left(&b, i);
        smplock_acquire(&h->m, 0);
        h->data = i;
        h->last = final;
        h->valid = 1;
        smpcond_signal(&h->full);
        while (!h->ack)
            smpcond_wait(&h->ack_cv, &h->m, 0);
        h->ack = 0;
        smplock_release(&h->m, 0);
        if (final) {
            h->produced = i + 1;
            return;
        }
    }
}

static void consumer(struct handshake *h)
{
    for (uint32_t i = 0;; i++) {
        smplock_acquire(&h->m, 1);
        while (!h->valid)
            smpcond_wait(&h->full, &h->m, 1);
        h->received = h->received + (h->data == i);
        bool final = h->last;
        h->valid = 0;
        h->ack = 1;
        smpcond_signal(&h->ack_cv);
        smplock_release(&h->m, 1);
        if (final)
            return;
    }
}

static void handshake_worker(uint32_t w, void *arg)
{
    if (w == 0)
        producer(arg);
    else
        consumer(arg);
}

static int64_t run_handshake(void *arg)
{
    struct handshake *h = arg;
    smpcond_init(&h->full);
    smpcond_init(&h->ack_cv);
    h->data = h->valid = h->ack = h->last = h->received = h->produced = 0;
    uint32_t parks = h->m.parks, handoffs = h->m.handoffs;
    int64_t t = parallel_run(2, handshake_worker, h);
    h->lost += h->produced - h->received;
    h->cut += h->produced < h->items;
    tally_sample(&h->tally, &h->m, parks, handoffs, h->produced); /* per 1000 items (two locks and two waits each) */
    return parallel_scaled(t, h->items, h->produced);
}

static void handshake_params(struct bench_case *c, void *hook_arg)
{
    struct handshake *h = hook_arg;
    outcome_params(c, &h->spec, h->lost, h->cut, &h->tally);
    if (h->lost)
        lost_error(c->name, spec_name(&h->spec), 2, h->lost);
}

/* One LiteThreads setting, both release rules in turn. */
static void measure_litethreads(struct bench_ctx *ctx, uint32_t lock_loops, uint32_t unlock_loops, uint32_t items)
{
    struct bench_case cases[NRULES];
    struct bench_item its[NRULES];
    for (uint32_t r = 0; r < NRULES; r++) {
        struct handshake *h = &handshakes[r];
        h->spec = (struct lock_spec){ FAMILY_SMPLOCK, rules[r], true, lock_loops, unlock_loops, 0 };
        smplock_init(&h->m, rules[r], true);
        smplock_set_loops(&h->m, lock_loops, unlock_loops);
        h->items = items;
        h->lost = h->cut = 0;
        h->tally = (struct park_tally){ 0, 0, 0 };
        cases[r] = (struct bench_case){ .name = "litethreads", .per = items };
        spec_params(&cases[r], &h->spec);
        add(&cases[r], (struct bench_param)PARAM_NUM("items", items));
        add(&cases[r], (struct bench_param)PARAM_NUM("cpus", 2));
        parallel_sweep_params(&cases[r], 2);
        its[r] = (struct bench_item){ .c = &cases[r], .fn = run_handshake, .arg = h, .late_params = handshake_params,
                                      .hook_arg = h };
    }
    bench_measure_set(ctx, its, NRULES);
}

/* --- Valchanov's user-space library: 5 fibers on one CPU --------------------------------------- */

struct fiber_crowd {
    struct fmutex m;
    uint32_t reps, counter, lost;
    struct fiber fibers[VALCHANOV_THREADS];
};

static struct fiber_crowd fc;

static void fiber_body(void *arg)
{
    struct fiber_crowd *c = arg;
    for (uint32_t i = 0; i < c->reps; i++) {
        fmutex_lock(&c->m);
        c->counter++;
        fmutex_unlock(&c->m);
    }
}

static int64_t run_fibers(void *arg)
{
    struct fiber_crowd *c = arg;
    struct fiber_spec fs[VALCHANOV_THREADS];
    fmutex_init(&c->m);
    c->counter = 0;
    for (uint32_t i = 0; i < VALCHANOV_THREADS; i++)
        fs[i] = (struct fiber_spec){ &c->fibers[i], "valchanov", fiber_body, c, 4096 };
    int64_t t = bench_time_fibers(fs, VALCHANOV_THREADS, 0);
    c->lost += VALCHANOV_THREADS * c->reps - c->counter;
    return t;
}

static void fiber_params(struct bench_case *c, void *hook_arg)
{
    struct fiber_crowd *fcr = hook_arg;
    add(c, (struct bench_param)PARAM_NUM("lost", fcr->lost));
    add(c, (struct bench_param)PARAM_NUM("cut", 0));
    if (fcr->lost)
        lost_error(c->name, "fiber_mutex", 1, fcr->lost);
}

/* --- one pause ----------------------------------------------------------------------------------- */

static int64_t run_pause(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        cpu_pause();
    return (int64_t)(tsc_end() - t0);
}

/* --- the benchmark ------------------------------------------------------------------------------ */

/* The user's lock objects, one a crowd, the first checked before anything is measured (a progress record names
 * the lock: a hang from here is its); false, with a skip record saying why, when it is not to be measured. */
static bool user_objects(struct bench_ctx *ctx)
{
    bench_running_user(ctx, "user", user_lock()->name);
    for (uint32_t j = 0; j < MAX_SET; j++)
        if (!(user_objs[j] = memory_alloc(user_lock()->size, 64))) {
            bench_skip(ctx, "user", "no memory for the user's lock objects");
            return false;
        }
    const char *why = user_lock_check(user_objs[0], smp_cpus());
    if (why)
        bench_skip(ctx, "user", why);
    return !why;
}

static void run(struct bench_ctx *ctx)
{
    static struct lock_spec all[NSPECS], sweep[MAX_SET], valch[NSPECS];
    static uint32_t reps; /* run_pause's */
    uint32_t n = smp_cpus(), ks[PARALLEL_COUNTS_MAX], nk = parallel_counts(ks);
    reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_SMPLOCKS_PAPER_REPS : QUICK_REPS);
    struct region_mark mark;
    memory_mark(&mark);
    user_ok = user_lock() && user_objects(ctx);
    uint32_t nall = pick(all, 0), nsweep = sweep_set(sweep), nvalch = pick(valch, IN_VALCHANOV);
    uint32_t sweeps = n > 2 ? 2 : 1, across = n < VALCHANOV_THREADS ? n : VALCHANOV_THREADS;
    bench_plan(ctx, 1 + (nk + 1) * nall + sweeps * nsweep + NLITE * NRULES + 1 + nvalch);

    struct bench_case p = { .name = "pause", .per = reps, .subtract_overhead = true };
    add(&p, (struct bench_param)PARAM_NUM("cpus", 1));
    add(&p, (struct bench_param)PARAM_NUM("reps", reps));
    bench_measure(ctx, &p, run_pause, &reps);

    for (uint32_t i = 0; i < nk; i++)
        measure_crowds(ctx, "contended", all, nall, ks[i], reps, false);
    measure_crowds(ctx, "sweep", sweep, nsweep, 2, reps, false);
    if (sweeps > 1)
        measure_crowds(ctx, "sweep", sweep, nsweep, n, reps, false);
    measure_crowds(ctx, "handoff", all, nall, 2, reps, true);

    uint32_t items = reps / LITE_ITEM_DIVISOR ? reps / LITE_ITEM_DIVISOR : 1;
    for (uint32_t j = 0; j < NLITE; j++)
        measure_litethreads(ctx, lite[j][0], lite[j][1], items);

    sched_init(SWITCH_CALLEE);
    fc.reps = reps;
    fc.lost = 0;
    struct bench_case f = { .name = "valchanov", .per = (uint64_t)VALCHANOV_THREADS * reps };
    add(&f, (struct bench_param)PARAM_STR("lock", "fiber_mutex"));
    add(&f, (struct bench_param)PARAM_NUM("cpus", 1));
    add(&f, (struct bench_param)PARAM_NUM("threads", VALCHANOV_THREADS));
    add(&f, (struct bench_param)PARAM_NUM("reps", reps));
    struct bench_item fi = { .c = &f, .fn = run_fibers, .arg = &fc, .late_params = fiber_params, .hook_arg = &fc };
    bench_measure_set(ctx, &fi, 1);
    measure_crowds(ctx, "valchanov", valch, nvalch, across, reps, false);
    memory_release(&mark);
}

const struct bench bench_smplocks = {
    .name = "smplocks",
    .what = "locks between CPUs: tas, ttas, ticket, MCS, NPTL's mutex, spin-then-block (handoff, barge) vs k and "
            "their spin settings; handoff; LiteThreads and Valchanov across CPUs",
    .in_smp = true,
    .unavailable = parallel_needs_two,
    .run = run,
};
