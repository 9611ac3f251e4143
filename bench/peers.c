/* bench peers (hosted build only): cleanroom's fibers and locks side by side
 * with what a Linux program would otherwise use, in one run:
 *   switch_fiber / switch_ucontext: a two-party switch, callee vs swapcontext;
 *   pingpong_fiber / pingpong_pthread_1cpu / pingpong_pthread_2cpu: a
 *     mutex+condvar ping-pong, fibers vs NPTL threads on one CPU (as the
 *     LiteThreads report pinned with taskset) and on two;
 *   create_fiber / create_pthread: create + run + join, per thread;
 *   lock_*: uncontended lock+unlock of each cleanroom lock and of
 *     pthread_mutex and pthread_spin.
 * All in cycles per operation (switch, round trip, thread, lock+unlock). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/counters.h"
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "runtime/fiber.h"
#include "runtime/pair.h"
#include "runtime/pingpong.h"
#include "runtime/spinlock.h"
#include "runtime/stackpool.h"
#include "runtime/sync.h"

#define REPS_DEFAULT 10000
#define CREATE_BATCH 64

/* --- switches ------------------------------------------------------------------ */

static void no_work(void *ctx, int which) { (void)ctx, (void)which; }

static int64_t run_switch_fiber(void *arg) { return pair_switch_cycles(arg); }

struct uc_pair {
    ucontext_t main, a, b;
    uint32_t reps;
};
static struct uc_pair ucp;

static void uc_a(void)
{
    for (uint32_t i = 0; i < ucp.reps; i++)
        swapcontext(&ucp.a, &ucp.b);
}

static void uc_b(void)
{
    for (;;)
        swapcontext(&ucp.b, &ucp.a);
}

static int64_t run_switch_ucontext(void *arg)
{
    uint8_t *stacks = arg;
    getcontext(&ucp.a);
    ucp.a.uc_stack.ss_sp = stacks;
    ucp.a.uc_stack.ss_size = 65536;
    ucp.a.uc_link = &ucp.main;
    makecontext(&ucp.a, uc_a, 0);
    getcontext(&ucp.b);
    ucp.b.uc_stack.ss_sp = stacks + 65536;
    ucp.b.uc_stack.ss_size = 65536;
    ucp.b.uc_link = &ucp.main;
    makecontext(&ucp.b, uc_b, 0);
    uint64_t t0 = tsc_begin();
    swapcontext(&ucp.main, &ucp.a); /* a and b alternate 2*reps times, then a ends */
    return (int64_t)(tsc_end() - t0);
}

/* --- mutex + condvar ping-pong ----------------------------------------------------------- */

static int64_t run_pingpong_fiber(void *arg)
{
    struct fiber_pingpong *p = arg;
    pingpong_init(p, p->rounds);
    const struct fiber_spec specs[] = { { &p->f[0], "ping", pingpong_body, p, 0 }, { &p->f[1], "pong", pingpong_body, p, 0 } };
    return bench_time_fibers(specs, 2, 0);
}

struct thread_pp {
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint32_t turn, rounds;
    int cpus[2];
};

struct thread_arg {
    struct thread_pp *p;
    uint32_t me;
};

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void *tpp_body(void *arg)
{
    struct thread_arg *a = arg;
    struct thread_pp *p = a->p;
    pin(p->cpus[a->me]);
    for (uint32_t i = 0; i < p->rounds; i++) {
        pthread_mutex_lock(&p->m);
        while (p->turn != a->me)
            pthread_cond_wait(&p->cv, &p->m);
        p->turn = !a->me;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->m);
    }
    return 0;
}

static int64_t run_pingpong_pthread(void *arg)
{
    struct thread_pp *p = arg;
    pthread_mutex_init(&p->m, 0);
    pthread_cond_init(&p->cv, 0);
    p->turn = 0;
    pthread_t t[2];
    struct thread_arg a[2] = { { p, 0 }, { p, 1 } };
    uint64_t t0 = tsc_begin();
    pthread_create(&t[0], 0, tpp_body, &a[0]);
    pthread_create(&t[1], 0, tpp_body, &a[1]);
    pthread_join(t[0], 0);
    pthread_join(t[1], 0);
    int64_t cycles = (int64_t)(tsc_end() - t0);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->m);
    return cycles;
}

/* --- create + run + join -------------------------------------------------------------------- */

struct creation {
    struct stackpool pool;
    struct fiber parent, children[CREATE_BATCH];
};

static void empty_fiber(void *arg) { (void)arg; }

static void creator(void *arg)
{
    struct creation *c = arg;
    for (int i = 0; i < CREATE_BATCH; i++) {
        struct fiber_stack s;
        if (!stackpool_take(&c->pool, &s))
            return;
        fiber_create_on(&c->children[i], "child", empty_fiber, 0, &s);
        fiber_join(&c->children[i]);
        stackpool_give(&c->pool, &s);
    }
}

static int64_t run_create_fiber(void *arg)
{
    struct creation *c = arg;
    const struct fiber_spec parent = { &c->parent, "parent", creator, c, 0 };
    return bench_time_fibers(&parent, 1, 0);
}

static void *empty_thread(void *arg) { return arg; }

static int64_t run_create_pthread(void *arg)
{
    (void)arg;
    uint64_t t0 = tsc_begin();
    for (int i = 0; i < CREATE_BATCH; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, empty_thread, 0) == 0)
            pthread_join(t, 0);
    }
    return (int64_t)(tsc_end() - t0);
}

/* --- uncontended locks ---------------------------------------------------------------------- */

enum peer_lock { PL_TAS, PL_TTAS, PL_TICKET, PL_MUTEX, PL_SPINBLOCK, PL_PTHREAD_MUTEX, PL_PTHREAD_SPIN, PL_COUNT };
static const char *const peer_lock_names[PL_COUNT] = {
    "lock_tas", "lock_ttas", "lock_ticket", "lock_mutex", "lock_spinblock", "lock_pthread_mutex", "lock_pthread_spin",
};

struct lock_run {
    enum peer_lock kind;
    uint32_t reps;
    struct spinlock spin;
    struct fmutex mutex;
    struct spinblock sb;
    pthread_mutex_t pm;
    pthread_spinlock_t ps;
};

static int64_t run_lock(void *arg)
{
    struct lock_run *l = arg;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < l->reps; i++) {
        switch (l->kind) {
        case PL_MUTEX: fmutex_lock(&l->mutex); fmutex_unlock(&l->mutex); break;
        case PL_SPINBLOCK: spinblock_lock(&l->sb); spinblock_unlock(&l->sb); break;
        case PL_PTHREAD_MUTEX: pthread_mutex_lock(&l->pm); pthread_mutex_unlock(&l->pm); break;
        case PL_PTHREAD_SPIN: pthread_spin_lock(&l->ps); pthread_spin_unlock(&l->ps); break;
        default: spin_lock(&l->spin); spin_unlock(&l->spin); break;
        }
    }
    return (int64_t)(tsc_end() - t0);
}

/* --- the benchmark ------------------------------------------------------------------------------- */

static struct fiber_pingpong fpp;
static struct thread_pp tpp;
static struct creation creation;
static struct lock_run lr;

static void measure1(struct bench_ctx *ctx, const char *name, uint64_t per, bench_run_fn fn, void *arg,
                     const char *peer)
{
    struct bench_case c = { .name = name, .per = per };
    c.params[c.nparams++] = (struct bench_param)PARAM_NUM("ops", per);
    c.params[c.nparams++] = (struct bench_param)PARAM_STR("impl", peer);
    bench_measure(ctx, &c, fn, arg);
}

/* A case that runs more than one thread runs with the counters paused: in a
 * virtual machine, switching a thread with counters open traps to the
 * hypervisor, which saves and reloads the PMU (a pthread handoff rose from
 * ~15 k to ~860 k ticks on a KVM guest), so the sample would time the trap,
 * not the handoff. Its samples carry no counts. */
static void measure_threads(struct bench_ctx *ctx, const char *name, uint64_t per, bench_run_fn fn, void *arg,
                            const char *peer)
{
    counters_pause();
    measure1(ctx, name, per, fn, arg, peer);
    counters_resume();
}

static void run(struct bench_ctx *ctx)
{
    uint32_t reps = bench_reps(ctx, REPS_DEFAULT);
    uint32_t rounds = reps / 10 ? reps / 10 : 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    bench_plan(ctx, 2 + 3 + 2 + PL_COUNT);
    sched_init(SWITCH_CALLEE);
    struct region_mark mark;
    memory_mark(&mark);

    struct fiber_pair pair;
    if (pair_init(&pair, SWITCH_CALLEE, reps, no_work, 0))
        measure1(ctx, "switch_fiber", 2 * (uint64_t)reps, run_switch_fiber, &pair, "cleanroom callee");
    else
        bench_skip(ctx, "switch_fiber", "no memory for two fiber stacks");
    uint8_t *uc_stacks = memory_alloc(2 * 65536, 16);
    ucp.reps = reps;
    if (uc_stacks)
        measure1(ctx, "switch_ucontext", 2 * (uint64_t)reps, run_switch_ucontext, uc_stacks, "glibc swapcontext");
    else
        bench_skip(ctx, "switch_ucontext", "no memory for two stacks");

    fpp.rounds = rounds;
    measure1(ctx, "pingpong_fiber", rounds, run_pingpong_fiber, &fpp, "cleanroom fmutex+fcond");
    tpp.rounds = rounds;
    int here = sched_getcpu();
    tpp.cpus[0] = tpp.cpus[1] = here < 0 ? 0 : here;
    measure_threads(ctx, "pingpong_pthread_1cpu", rounds, run_pingpong_pthread, &tpp, "NPTL mutex+cond, one CPU");
    if (cpus >= 2) {
        tpp.cpus[1] = tpp.cpus[0] == 0 ? 1 : 0;
        measure_threads(ctx, "pingpong_pthread_2cpu", rounds, run_pingpong_pthread, &tpp, "NPTL mutex+cond, two CPUs");
        pin(tpp.cpus[0]);
    } else {
        bench_skip(ctx, "pingpong_pthread_2cpu", "this machine has one CPU online");
    }

    if (stackpool_init(&creation.pool, CREATE_BATCH, 16384))
        measure1(ctx, "create_fiber", CREATE_BATCH, run_create_fiber, &creation, "cleanroom stack pool");
    else
        bench_skip(ctx, "create_fiber", "no memory for the stack pool");
    measure_threads(ctx, "create_pthread", CREATE_BATCH, run_create_pthread, 0, "NPTL pthread_create/join");

    lr.reps = reps;
    for (int k = 0; k < PL_COUNT; k++) {
        lr.kind = (enum peer_lock)k;
        spin_init(&lr.spin, k == PL_TTAS ? SPIN_TTAS : k == PL_TICKET ? SPIN_TICKET : SPIN_TAS, false);
        fmutex_init(&lr.mutex);
        spinblock_init(&lr.sb, 0, 0);
        pthread_mutex_init(&lr.pm, 0);
        pthread_spin_init(&lr.ps, PTHREAD_PROCESS_PRIVATE);
        measure1(ctx, peer_lock_names[k], reps, run_lock, &lr, k >= PL_PTHREAD_MUTEX ? "NPTL" : "cleanroom");
    }
    pair_free(&pair);
    memory_release(&mark);
}

const struct bench bench_peers = {
    .name = "peers",
    .what = "hosted: fibers and locks vs glibc ucontext and NPTL pthreads",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
