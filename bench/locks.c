/* bench locks: what synchronisation costs, in cycles per operation.
 *
 * Uncontended acquire+release of every lock (tas, ttas, ticket, each with
 * and without pause; the fiber mutex; the LiteThreads spin-then-block
 * mutex; a semaphore's post+wait), minus the same loop with empty calls.
 * contended: k fibers each {lock; yield; unlock; yield}, per lock that can
 * block. valchanov: 5 fibers each lock and unlock one mutex reps times
 * (Valchanov & Andreev's third test). litethreads: the producer-consumer
 * double handshake of the LiteThreads report under its (lock_loops,
 * unlock_loops) settings. condvar: a ping-pong. barrier: n fibers. */
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "lib/defaults.h"
#include "runtime/fiber.h"
#include "runtime/pingpong.h"
#include "runtime/spinlock.h"
#include "runtime/sync.h"
#include "runtime/userprims.h"

#define MAX_FIBERS 32

/* --- every lock behind one interface ------------------------------------------ */

enum lock_kind {
    LK_TAS, LK_TAS_PAUSE, LK_TTAS, LK_TTAS_PAUSE, LK_TICKET, LK_TICKET_PAUSE,
    LK_MUTEX, LK_SPINBLOCK, LK_SEM, LK_COUNT,
    LK_USER = LK_COUNT /* the user's (--lock-file, runtime/userprims.h): measured only when given */
};

static const char *const lock_names[LK_COUNT + 1] = {
    "tas", "tas_pause", "ttas", "ttas_pause", "ticket", "ticket_pause", "mutex", "spinblock", "sem", "user",
};

struct any_lock {
    enum lock_kind kind;
    struct spinlock spin;
    struct fmutex mutex;
    struct spinblock sb;
    struct fsem sem;
    void *user; /* the user's lock object (LK_USER), allocated when the benchmark starts */
};

static void any_init(struct any_lock *l, enum lock_kind kind)
{
    l->kind = kind;
    if (kind == LK_USER)
        user_lock()->init(l->user, 1);
    if (kind <= LK_TICKET_PAUSE)
        spin_init(&l->spin, (enum spin_kind)(kind / 2), kind & 1);
    fmutex_init(&l->mutex);
    spinblock_init(&l->sb, 0, 0);
    fsem_init(&l->sem, 1);
}

static void any_lock(void *p)
{
    struct any_lock *l = p;
    switch (l->kind) {
    case LK_USER: user_lock()->lock(l->user, 0); break;
    case LK_MUTEX: fmutex_lock(&l->mutex); break;
    case LK_SPINBLOCK: spinblock_lock(&l->sb); break;
    case LK_SEM: fsem_wait(&l->sem); break;
    default: spin_lock(&l->spin); break;
    }
}

static void any_unlock(void *p)
{
    struct any_lock *l = p;
    switch (l->kind) {
    case LK_USER: user_lock()->unlock(l->user, 0); break;
    case LK_MUTEX: fmutex_unlock(&l->mutex); break;
    case LK_SPINBLOCK: spinblock_unlock(&l->sb); break;
    case LK_SEM: fsem_post(&l->sem); break;
    default: spin_unlock(&l->spin); break;
    }
}

static void no_op(void *p) { (void)p; }

/* Through volatile pointers, so the baseline loop keeps its calls. */
struct lock_loop {
    void (*volatile lock)(void *);
    void (*volatile unlock)(void *);
    void *obj;
    uint32_t reps;
};

static int64_t time_loop(struct lock_loop *l)
{
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < l->reps; i++) {
        l->lock(l->obj);
        l->unlock(l->obj);
    }
    return (int64_t)(tsc_end() - t0);
}

/* The loop minus its empty twin: signed, as measured. */
static int64_t run_uncontended(void *arg)
{
    struct lock_loop *real = arg;
    struct lock_loop empty = { no_op, no_op, real->obj, real->reps };
    return time_loop(real) - time_loop(&empty);
}

/* --- fibers doing the same thing --------------------------------------------- */

struct crowd {
    uint32_t n, reps;
    struct any_lock lock;
    struct fbarrier barrier;
    struct fiber fibers[MAX_FIBERS];
    void (*body)(void *);
};

static void contended_body(void *arg)
{
    struct crowd *c = arg;
    for (uint32_t i = 0; i < c->reps; i++) {
        any_lock(&c->lock);
        fiber_yield();
        any_unlock(&c->lock);
        fiber_yield();
    }
}

static void valchanov_body(void *arg)
{
    struct crowd *c = arg;
    for (uint32_t i = 0; i < c->reps; i++) {
        any_lock(&c->lock);
        any_unlock(&c->lock);
    }
}

static void barrier_body(void *arg)
{
    struct crowd *c = arg;
    for (uint32_t i = 0; i < c->reps; i++)
        fbarrier_wait(&c->barrier);
}

static struct fiber_spec crowd_specs[MAX_FIBERS];

/* Runs c->n fibers of c->body to the end; cycles (0: did not fit), switches. */
static int64_t run_crowd_counting(struct crowd *c, uint64_t *switches)
{
    for (uint32_t i = 0; i < c->n; i++)
        crowd_specs[i] = (struct fiber_spec){ &c->fibers[i], "crowd", c->body, c, 4096 };
    return bench_time_fibers(crowd_specs, c->n, switches);
}

static int64_t run_crowd(void *arg)
{
    uint64_t switches;
    return run_crowd_counting(arg, &switches);
}

/* --- the LiteThreads producer-consumer double handshake ------------------------ */

struct handshake {
    struct spinblock m;
    struct fcond full, ack_cv;
    uint32_t items, data, valid, ack, received;
    struct fiber producer, consumer;
};

static void producer(void *arg)
{
    struct handshake *h = arg;
    for (uint32_t i = 0; i < h->items; i++) {
        spinblock_lock(&h->m);
        h->data = i;
        h->valid = 1;
        fcond_signal(&h->full);
        while (!h->ack)
            fcond_wait_spinblock(&h->ack_cv, &h->m);
        h->ack = 0;
        spinblock_unlock(&h->m);
    }
}

static void consumer(void *arg)
{
    struct handshake *h = arg;
    for (uint32_t i = 0; i < h->items; i++) {
        spinblock_lock(&h->m);
        while (!h->valid)
            fcond_wait_spinblock(&h->full, &h->m);
        h->received += h->data == i;
        h->valid = 0;
        h->ack = 1;
        fcond_signal(&h->ack_cv);
        spinblock_unlock(&h->m);
    }
}

static int64_t run_handshake(void *arg)
{
    struct handshake *h = arg;
    fcond_init(&h->full);
    fcond_init(&h->ack_cv);
    h->data = h->valid = h->ack = h->received = 0;
    const struct fiber_spec specs[] = {
        { &h->consumer, "consumer", consumer, h, 0 }, { &h->producer, "producer", producer, h, 0 },
    };
    return bench_time_fibers(specs, 2, 0);
}

/* --- condvar ping-pong ----------------------------------------------------------- */

static int64_t run_pingpong(void *arg)
{
    struct fiber_pingpong *p = arg;
    pingpong_init(p, p->rounds);
    const struct fiber_spec specs[] = { { &p->f[0], "ping", pingpong_body, p, 0 }, { &p->f[1], "pong", pingpong_body, p, 0 } };
    return bench_time_fibers(specs, 2, 0);
}

/* --- the benchmark ------------------------------------------------------------------- */

static struct crowd crowd;
static struct handshake hs;
static struct fiber_pingpong pp;

static void add(struct bench_case *c, struct bench_param p) { c->params[c->nparams++] = p; }

/* The user's lock, before anything is measured: a progress record names it (a hang from here is its), its
 * object is allocated and checked (runtime/userprims.h); NULL when it may be measured, else why not. */
static const char *user_lock_refused(struct bench_ctx *ctx, struct any_lock *l)
{
    bench_running_user(ctx, lock_names[LK_USER], user_lock()->name);
    l->user = memory_alloc(user_lock()->size, 64);
    return l->user ? user_lock_check(l->user, 1) : "no memory for the user's lock";
}

static void run(struct bench_ctx *ctx)
{
    static const uint32_t ks[] = { 2, 4, 8, 16 };
    static const enum lock_kind blocking[] = { LK_MUTEX, LK_SPINBLOCK, LK_SEM };
    static const enum lock_kind valchanov[] = { LK_MUTEX, LK_SPINBLOCK, LK_TAS, LK_TTAS, LK_TICKET };
    static const uint32_t lite[][2] = { { 100, 200 }, { 0, 0 }, { 0, 200 }, { 100, 0 }, { 1000, 0 }, { 1000, 2000 } };
    static const uint32_t barrier_n[] = { 2, 8, 32 };
    const uint32_t nb = sizeof blocking / sizeof blocking[0], nv = sizeof valchanov / sizeof valchanov[0];
    const uint32_t nl = sizeof lite / sizeof lite[0], nbar = sizeof barrier_n / sizeof barrier_n[0];
    const uint32_t nk = sizeof ks / sizeof ks[0];
    bool paper = ctx->cfg->suite == SUITE_PAPER;
    uint32_t reps = bench_reps(ctx, paper ? CR_DEF_LOCKS_PAPER_REPS : CR_DEF_LOCKS_REPS);
    /* the blocking scenarios switch at every step: a tenth of the reps */
    uint32_t steps = reps / 10 ? reps / 10 : 1;
    /* the user's lock (--lock-file): uncontended, and in Valchanov's test (no fiber yields holding it); not
     * in the contended case, whose fibers yield holding the lock: a lock that spins would spin forever there */
    bool user = user_lock() != 0;
    bench_plan(ctx, LK_COUNT + user * 2 + nk * nb + nv + nl + 1 + nbar);
    sched_init(SWITCH_CALLEE);
    struct region_mark mark;
    memory_mark(&mark);
    const char *user_why = user ? user_lock_refused(ctx, &crowd.lock) : 0;

    for (int k = 0; k < LK_COUNT + user; k++) {
        struct bench_case c = { .name = lock_names[k], .per = reps };
        if (k == LK_USER && user_why) {
            bench_skip(ctx, c.name, user_why);
            continue;
        }
        any_init(&crowd.lock, (enum lock_kind)k);
        struct lock_loop loop = { any_lock, any_unlock, &crowd.lock, reps };
        add(&c, (struct bench_param)PARAM_NUM("reps", reps));
        if (k == LK_USER)
            add(&c, (struct bench_param)PARAM_STR("code", user_lock()->name));
        bench_measure(ctx, &c, run_uncontended, &loop);
    }
    for (uint32_t i = 0; i < nk; i++) {
        for (uint32_t j = 0; j < nb; j++) {
            crowd.n = ks[i];
            crowd.reps = steps / ks[i] ? steps / ks[i] : 1;
            crowd.body = contended_body;
            any_init(&crowd.lock, blocking[j]);
            uint64_t switches;
            if (!run_crowd_counting(&crowd, &switches)) {
                bench_skip(ctx, "contended", "no memory for the fiber stacks");
                continue;
            }
            struct bench_case c = { .name = "contended", .per = (uint64_t)crowd.n * crowd.reps };
            add(&c, (struct bench_param)PARAM_NUM("k", ks[i]));
            add(&c, (struct bench_param)PARAM_STR("lock", lock_names[blocking[j]]));
            add(&c, (struct bench_param)PARAM_NUM("reps", crowd.reps));
            add(&c, (struct bench_param)PARAM_NUM("switches", switches));
            bench_measure(ctx, &c, run_crowd, &crowd);
        }
    }
    for (uint32_t j = 0; j < nv + user; j++) {
        enum lock_kind kind = j < nv ? valchanov[j] : LK_USER;
        if (kind == LK_USER && user_why) {
            bench_skip(ctx, "valchanov", user_why);
            continue;
        }
        crowd.n = 5;
        crowd.reps = reps;
        crowd.body = valchanov_body;
        any_init(&crowd.lock, kind);
        struct bench_case c = { .name = "valchanov", .per = 5 * (uint64_t)reps };
        add(&c, (struct bench_param)PARAM_STR("lock", lock_names[kind]));
        add(&c, (struct bench_param)PARAM_NUM("threads", 5));
        add(&c, (struct bench_param)PARAM_NUM("reps", reps));
        if (kind == LK_USER)
            add(&c, (struct bench_param)PARAM_STR("code", user_lock()->name));
        bench_measure(ctx, &c, run_crowd, &crowd);
    }
    /* the spins make an item up to a hundred times dearer than a condvar
     * round (a few thousand loop iterations): a tenth of the steps */
    uint32_t items = steps / 10 ? steps / 10 : 1;
    for (uint32_t j = 0; j < nl; j++) {
        spinblock_init(&hs.m, lite[j][0], lite[j][1]);
        hs.items = items;
        struct bench_case c = { .name = "litethreads", .per = items };
        add(&c, (struct bench_param)PARAM_NUM("lock_loops", lite[j][0]));
        add(&c, (struct bench_param)PARAM_NUM("unlock_loops", lite[j][1]));
        add(&c, (struct bench_param)PARAM_NUM("items", items));
        bench_measure(ctx, &c, run_handshake, &hs);
    }
    pp.rounds = steps;
    struct bench_case cv = { .name = "condvar", .per = steps };
    add(&cv, (struct bench_param)PARAM_NUM("rounds", steps));
    bench_measure(ctx, &cv, run_pingpong, &pp);
    for (uint32_t j = 0; j < nbar; j++) {
        crowd.n = barrier_n[j];
        crowd.reps = steps / barrier_n[j] ? steps / barrier_n[j] : 1;
        crowd.body = barrier_body;
        fbarrier_init(&crowd.barrier, barrier_n[j]);
        struct bench_case c = { .name = "barrier", .per = crowd.reps };
        add(&c, (struct bench_param)PARAM_NUM("n", barrier_n[j]));
        add(&c, (struct bench_param)PARAM_NUM("generations", crowd.reps));
        bench_measure(ctx, &c, run_crowd, &crowd);
    }
    memory_release(&mark);
}

const struct bench bench_locks = {
    .name = "locks",
    .what = "spinlocks, fiber mutex, semaphore, condvar, barrier; LiteThreads and Valchanov-Andreev tests",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
