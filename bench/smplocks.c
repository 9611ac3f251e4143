/* bench smplocks: locks between CPUs (runtime/smplock.h), worker w on CPU w
 * (bench/parallel.h).
 *
 *   contended    k workers each {lock; increment one shared counter;
 *                unlock} reps times: time per lock+unlock over all of them,
 *                for every lock and k = 1, 2, 4, ... up to the run's CPUs
 *   handoff      CPUs 0 and 1 take turns through the lock (a turn word
 *                inside it): time per handoff of the lock from one to the other
 *   litethreads  LiteThreads' producer-consumer double handshake (bench locks'
 *                one-CPU case) with the producer on CPU 0 and the consumer on
 *                CPU 1, as in the report's tables 14-21, under its
 *                (lock_loops, unlock_loops) settings
 *   valchanov    Valchanov & Andreev's 5 threads x lock/unlock with the workers
 *                on separate CPUs (min(5, CPUs) of them), beside 5 fibers on
 *                one CPU with the fiber mutex (their user-space library)
 *
 * spinblock blocks at once (lock_loops 0) and hands the lock to the first
 * blocked waiter; spinblock_spin tries lock_loops times first (Valchanov's
 * kernel library and LiteThreads spin before they block); mutex is NPTL's
 * algorithm (block at once, wake one, no handoff). In the kernel blocking
 * is polling a word of one's own, hosted a futex (params.park, kernel/park.h).
 *
 * Every record says params.cpus (the CPUs working), params.lost (increments
 * or items the lock lost: 0, else an error record names the lock) and
 * params.cut (samples that reached the time limit and were scaled to the
 * planned count, bench/parallel.h: where CPUs are host threads). */
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/error_record.h"
#include "kernel/park.h"
#include "kernel/smp.h"
#include "lib/defaults.h"
#include "lib/fmt.h"
#include "lib/string.h"
#include "runtime/fiber.h"
#include "runtime/smplock.h"
#include "runtime/sync.h"

#define SPIN_LOOPS 100       /* spinblock_spin's lock_loops (LiteThreads' setting) */
#define VALCHANOV_THREADS 5
#define LITE_ITEM_DIVISOR 10 /* litethreads: reps / this items (each is two handshakes) */

struct lock_spec {
    const char *name;
    enum smplock_kind kind;
    bool pause;
    uint32_t lock_loops, unlock_loops;
};

static const struct lock_spec specs[] = {
    { "tas", SMPLOCK_TAS, false, 0, 0 },
    { "tas_pause", SMPLOCK_TAS, true, 0, 0 },
    { "ttas", SMPLOCK_TTAS, false, 0, 0 },
    { "ttas_pause", SMPLOCK_TTAS, true, 0, 0 },
    { "ticket", SMPLOCK_TICKET, false, 0, 0 },
    { "ticket_pause", SMPLOCK_TICKET, true, 0, 0 },
    { "mcs", SMPLOCK_MCS, false, 0, 0 },
    { "mcs_pause", SMPLOCK_MCS, true, 0, 0 },
    { "spinblock", SMPLOCK_SPINBLOCK, true, 0, 0 },
    { "spinblock_spin", SMPLOCK_SPINBLOCK, true, SPIN_LOOPS, 0 },
    { "mutex", SMPLOCK_MUTEX, true, 0, 0 },
};
#define NSPECS (sizeof specs / sizeof specs[0])
/* valchanov's locks (indices into specs): mutex (NPTL's algorithm: the
 * paper's NPTL), spinblock_spin (its kernel library, spinning first),
 * spinblock, tas, ticket, mcs */
static const uint32_t valchanov_specs[] = { 10, 9, 8, 0, 4, 6 };
#define NVALCHANOV (sizeof valchanov_specs / sizeof valchanov_specs[0])
static const uint32_t lite[][2] = { { 0, 0 }, { 100, 0 }, { 0, 200 }, { 100, 200 } };
#define NLITE (sizeof lite / sizeof lite[0])

/* --- k workers on one lock ------------------------------------------------------------ */

struct crowd {
    struct smplock lock;
    const struct lock_spec *spec;
    uint32_t k, reps;
    bool turns;                     /* handoff: take turns, else contend */
    volatile uint32_t counter __attribute__((aligned(64)));
    volatile uint32_t turn;
    uint32_t done[SMP_MAX_CPUS] __attribute__((aligned(64))); /* each worker's count, written at its end */
    uint32_t lost, cut;
};

static struct crowd crowds[NSPECS];

static void contend(uint32_t w, void *arg)
{
    struct crowd *c = arg;
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint32_t i = 0;
    for (; i < c->reps && parallel_budget_left(&b, i); i++) {
        smplock_acquire(&c->lock, w);
        c->counter = c->counter + 1;
        smplock_release(&c->lock, w);
    }
    c->done[w] = i;
}

/* Two workers, each taking the lock until it finds its turn and passing it on. */
static void take_turns(uint32_t w, void *arg)
{
    struct crowd *c = arg;
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint32_t mine = 0;
    for (uint32_t i = 0; mine < c->reps && parallel_budget_left(&b, i); i++) {
        smplock_acquire(&c->lock, w);
        if (c->turn == w) {
            c->turn = 1 - w;
            mine++;
        }
        smplock_release(&c->lock, w);
    }
    c->done[w] = mine;
}

static int64_t run_crowd(void *arg)
{
    struct crowd *c = arg;
    c->counter = c->turn = 0;
    int64_t t = parallel_run(c->k, c->turns ? take_turns : contend, c);
    uint64_t done = 0;
    for (uint32_t w = 0; w < c->k; w++)
        done += c->done[w];
    if (c->turns) /* strict alternation: CPU 0 is never more than one turn ahead */
        c->lost += c->done[0] != c->done[1] && c->done[0] != c->done[1] + 1;
    else
        c->lost += (uint32_t)(done - c->counter);
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

static void crowd_params(struct bench_case *c, void *hook_arg)
{
    struct crowd *cr = hook_arg;
    add(c, (struct bench_param)PARAM_NUM("lost", cr->lost));
    add(c, (struct bench_param)PARAM_NUM("cut", cr->cut));
    if (cr->lost)
        lost_error(c->name, cr->spec->name, cr->k, cr->lost);
}

static void spec_params(struct bench_case *c, const struct lock_spec *s)
{
    add(c, (struct bench_param)PARAM_STR("lock", s->name));
    if (s->kind == SMPLOCK_SPINBLOCK) {
        add(c, (struct bench_param)PARAM_NUM("lock_loops", s->lock_loops));
        add(c, (struct bench_param)PARAM_NUM("unlock_loops", s->unlock_loops));
    }
    if (s->kind >= SMPLOCK_SPINBLOCK)
        add(c, (struct bench_param)PARAM_STR("park", park_kind()));
}

/* The locks `which` (indices into specs) with k workers, measured in turn. */
static void measure_crowds(struct bench_ctx *ctx, const char *name, const uint32_t *which, uint32_t n, uint32_t k,
                           uint32_t reps, bool turns)
{
    static struct bench_case cases[NSPECS];
    static struct bench_item items[NSPECS];
    for (uint32_t j = 0; j < n; j++) {
        const struct lock_spec *s = &specs[which[j]];
        struct crowd *cr = &crowds[j];
        smplock_init(&cr->lock, s->kind, s->pause);
        smplock_set_loops(&cr->lock, s->lock_loops, s->unlock_loops);
        cr->spec = s;
        cr->k = k;
        cr->reps = reps;
        cr->turns = turns;
        cr->lost = cr->cut = 0;
        cases[j] = (struct bench_case){ .name = name, .per = (uint64_t)k * reps };
        spec_params(&cases[j], s);
        add(&cases[j], (struct bench_param)PARAM_NUM("cpus", k));
        add(&cases[j], (struct bench_param)PARAM_NUM("reps", reps));
        if (str_eq(name, "valchanov"))
            add(&cases[j], (struct bench_param)PARAM_NUM("threads", k));
        items[j] = (struct bench_item){ .c = &cases[j], .fn = run_crowd, .arg = cr, .late_params = crowd_params,
                                        .hook_arg = cr };
    }
    bench_measure_set(ctx, items, n);
}

/* --- the LiteThreads producer-consumer on two CPUs ------------------------------------------ */

struct handshake {
    struct smplock m;
    struct smpcond full, ack_cv;
    uint32_t items;
    volatile uint32_t data, valid, ack, last, received, produced;
    uint32_t lost, cut;
    uint64_t parks_seen, items_seen;
};

static struct handshake hs;

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
    uint32_t parks = h->m.parks;
    int64_t t = parallel_run(2, handshake_worker, h);
    h->lost += h->produced - h->received;
    h->cut += h->produced < h->items;
    h->parks_seen += h->m.parks - parks;
    h->items_seen += h->produced;
    return parallel_scaled(t, h->items, h->produced);
}

static void handshake_params(struct bench_case *c, void *hook_arg)
{
    struct handshake *h = hook_arg;
    add(c, (struct bench_param)PARAM_NUM("lost", h->lost));
    add(c, (struct bench_param)PARAM_NUM("cut", h->cut));
    /* how often a lock had to block, per 1000 items (two locks and two waits each) */
    add(c, (struct bench_param)PARAM_NUM("parks_permille", h->items_seen ? h->parks_seen * 1000 / h->items_seen : 0));
    if (h->lost)
        lost_error(c->name, "spinblock", 2, h->lost);
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

/* --- the benchmark ------------------------------------------------------------------------------ */

static void run(struct bench_ctx *ctx)
{
    uint32_t n = smp_cpus(), ks[PARALLEL_COUNTS_MAX], nk = parallel_counts(ks);
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_SMPLOCKS_PAPER_REPS : CR_DEF_SMPLOCKS_REPS);
    uint32_t all[NSPECS];
    for (uint32_t j = 0; j < NSPECS; j++)
        all[j] = j;
    bench_plan(ctx, (uint32_t)(nk * NSPECS + NSPECS + NLITE + 1 + NVALCHANOV));

    for (uint32_t i = 0; i < nk; i++)
        measure_crowds(ctx, "contended", all, NSPECS, ks[i], reps, false);
    measure_crowds(ctx, "handoff", all, NSPECS, 2, reps, true);

    uint32_t items = reps / LITE_ITEM_DIVISOR ? reps / LITE_ITEM_DIVISOR : 1;
    for (uint32_t j = 0; j < NLITE; j++) {
        smplock_init(&hs.m, SMPLOCK_SPINBLOCK, true);
        smplock_set_loops(&hs.m, lite[j][0], lite[j][1]);
        hs.items = items;
        hs.lost = hs.cut = 0;
        hs.parks_seen = hs.items_seen = 0;
        struct bench_case c = { .name = "litethreads", .per = items };
        add(&c, (struct bench_param)PARAM_NUM("lock_loops", lite[j][0]));
        add(&c, (struct bench_param)PARAM_NUM("unlock_loops", lite[j][1]));
        add(&c, (struct bench_param)PARAM_NUM("items", items));
        add(&c, (struct bench_param)PARAM_NUM("cpus", 2));
        add(&c, (struct bench_param)PARAM_STR("park", park_kind()));
        struct bench_item it = { .c = &c, .fn = run_handshake, .arg = &hs, .late_params = handshake_params,
                                 .hook_arg = &hs };
        bench_measure_set(ctx, &it, 1);
    }

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
    measure_crowds(ctx, "valchanov", valchanov_specs, NVALCHANOV, n < VALCHANOV_THREADS ? n : VALCHANOV_THREADS, reps,
                   false);
}

const struct bench bench_smplocks = {
    .name = "smplocks",
    .what = "locks between CPUs: tas, ttas, ticket, MCS, spin-then-block vs k; handoff; LiteThreads and Valchanov across CPUs",
    .in_smp = true,
    .unavailable = parallel_needs_two,
    .run = run,
};
