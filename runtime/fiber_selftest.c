#include "runtime/fiber_selftest.h"

#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/paging.h"
#include "arch/trap.h"
#include "kernel/memory.h"
#include "kernel/selftest.h"
#include "lib/fmt.h"
#include "runtime/fiber.h"
#include "runtime/overflow.h"
#include "runtime/pair.h"

#define D SELFTEST_DETAIL_MAX

/* --- each switch keeps what it promises ------------------------------------ */

static bool check_switch(enum switch_kind kind, uint32_t what, char *d)
{
    const char *why = switch_unavailable(kind);
    if (why) {
        fmt(d, D, "not available: %s", why);
        return true;
    }
    int64_t lost = switch_lost(kind, what);
    if (lost < 0) {
        fmt(d, D, "no memory for a stack");
        return false;
    }
    fmt(d, D, "%s: away to a fiber that trashes registers%s and back: lost mask 0x%x", switch_name(kind),
        what & SWITCH_CHECK_SSE ? ", x87 and xmm1" : what & SWITCH_CHECK_FPU ? " and x87" : "", (uint32_t)lost);
    return lost == 0;
}

bool fiber_test_switch_pushad(char *d) { return check_switch(SWITCH_PUSHAD, 0, d); }
bool fiber_test_switch_callee(char *d) { return check_switch(SWITCH_CALLEE, 0, d); }

bool fiber_test_switch_fxsave(char *d)
{
    uint32_t what = (cpu_has(FEAT_FPU) ? SWITCH_CHECK_FPU : 0) | (cpu_has(FEAT_SSE) ? SWITCH_CHECK_SSE : 0);
    return check_switch(SWITCH_FXSAVE, what, d);
}

/* switch_jump leaves by `jmp` when the other side called the switch from
 * elsewhere and by `ret` when from the same call site: both paths, each
 * away to the trashing fiber and back. */
bool fiber_test_switch_jump(char *d)
{
    int64_t own = switch_lost(SWITCH_JUMP, 0), one = switch_lost(SWITCH_JUMP, SWITCH_CHECK_ONE_SITE);
    if (own < 0 || one < 0) {
        fmt(d, D, "no memory for a stack");
        return false;
    }
    fmt(d, D, "jump: away to a fiber that trashes registers and back, called from two sites (jmp): lost mask "
              "0x%x; from one site (ret): lost mask 0x%x", (uint32_t)own, (uint32_t)one);
    return own == 0 && one == 0;
}

/* --- the run queue --------------------------------------------------------- */

#define RQ_FIBERS 5
#define RQ_ROUNDS 3

struct rq_log {
    uint32_t order[RQ_FIBERS * RQ_ROUNDS];
    uint32_t n;
};
static struct rq_log rq_log;
static uint32_t rq_ids[RQ_FIBERS];

static void rq_fiber(void *arg)
{
    uint32_t id = *(uint32_t *)arg;
    for (int r = 0; r < RQ_ROUNDS; r++) {
        if (rq_log.n < RQ_FIBERS * RQ_ROUNDS)
            rq_log.order[rq_log.n++] = id;
        fiber_yield();
    }
}

static bool run_queue_with(enum switch_kind kind, uint32_t *switches)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct fiber f[RQ_FIBERS];
    rq_log.n = 0;
    sched_init(kind);
    bool ok = true;
    for (uint32_t i = 0; i < RQ_FIBERS && ok; i++) {
        rq_ids[i] = i;
        ok = fiber_create(&f[i], "rq", rq_fiber, &rq_ids[i], 0) && f[i].state == FIBER_NEW;
    }
    if (ok)
        sched_run();
    for (uint32_t i = 0; i < rq_log.n && ok; i++)
        ok = rq_log.order[i] == i % RQ_FIBERS;
    for (uint32_t i = 0; i < RQ_FIBERS; i++) {
        ok = ok && f[i].state == FIBER_DEAD;
        fiber_release(&f[i]);
    }
    ok = ok && rq_log.n == RQ_FIBERS * RQ_ROUNDS && fiber_current()->state == FIBER_RUNNING;
    *switches = sched_switches();
    memory_release(&mark);
    return ok;
}

/* With every switch routine the scheduler can use. */
bool fiber_test_run_queue(char *d)
{
    uint32_t switches = 0;
    for (int k = 0; k < SWITCH_COUNT; k++) {
        if (switch_unavailable((enum switch_kind)k))
            continue;
        if (!run_queue_with((enum switch_kind)k, &switches)) {
            fmt(d, D, "%s: %u log entries of %d fibers x %d yields, or out of order, or not all dead",
                switch_name((enum switch_kind)k), rq_log.n, RQ_FIBERS, RQ_ROUNDS);
            return false;
        }
    }
    fmt(d, D, "each switch kind: %d fibers x %d yields ran round-robin in order (%u entries), all dead, %u switches",
        RQ_FIBERS, RQ_ROUNDS, rq_log.n, switches);
    return true;
}

struct join_state {
    struct fiber *target;
    uint32_t steps;       /* target's progress when the joiner woke */
    uint32_t target_steps;
    enum fiber_state seen_waiting;
};
static struct join_state js;

static void join_target(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++) {
        js.target_steps++;
        fiber_yield();
    }
}

static void join_waiter(void *arg)
{
    (void)arg;
    fiber_join(js.target);
    js.steps = js.target_steps;
}

static void join_observer(void *arg)
{
    struct fiber *waiter = arg;
    fiber_yield(); /* the waiter has blocked by now */
    js.seen_waiting = waiter->state;
}

bool fiber_test_join(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct fiber target, waiter, observer;
    js = (struct join_state){ 0 };
    js.target = &target;
    sched_init(SWITCH_PUSHAD);
    bool ok = fiber_create(&target, "target", join_target, 0, 0) &&
              fiber_create(&waiter, "waiter", join_waiter, 0, 0) &&
              fiber_create(&observer, "observer", join_observer, &waiter, 0);
    if (ok)
        sched_run();
    ok = ok && js.steps == 4 && js.seen_waiting == FIBER_WAITING && target.state == FIBER_DEAD &&
         waiter.state == FIBER_DEAD;
    fmt(d, D, "joiner was %s while the target ran, woke after its %u steps (want 4)",
        fiber_state_name(js.seen_waiting), js.steps);
    fiber_release(&target);
    fiber_release(&waiter);
    fiber_release(&observer);
    memory_release(&mark);
    return ok;
}

/* --- the paper's two-fiber environment -------------------------------------- */

struct pair_log {
    uint32_t calls[2];
    uint32_t sequence_ok;
    int last;
};

static void pair_work(void *ctx, int which)
{
    struct pair_log *l = ctx;
    if (l->last == which)
        l->sequence_ok = 0; /* the two must alternate */
    l->last = which;
    l->calls[which]++;
}

bool fiber_test_pair(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    bool ok = true;
    for (int k = 0; k < SWITCH_COUNT && ok; k++) {
        if (switch_unavailable((enum switch_kind)k))
            continue;
        struct pair_log log = { { 0, 0 }, 1, 1 };
        struct fiber_pair p;
        ok = pair_init(&p, (enum switch_kind)k, 1000, pair_work, &log);
        int run = 0;
        for (; run < 4 && ok; run++) { /* the same pair runs twice in each shape */
            log = (struct pair_log){ { 0, 0 }, 1, 1 };
            if (run % 2 == 0) {
                pair_prepare(&p);
                pair_run(&p);
            } else {
                pair_prepare_driver(&p);
                pair_run_driver(&p);
            }
            ok = log.calls[0] == 1000 && log.calls[1] == 1000 && log.sequence_ok;
        }
        if (!ok)
            fmt(d, D, "%s, %s: %u + %u work calls, alternating %s", switch_name((enum switch_kind)k),
                (run - 1) % 2 ? "driver and coroutine" : "two fibers", log.calls[0], log.calls[1],
                log.sequence_ok ? "yes" : "no");
        pair_free(&p);
    }
    if (ok)
        fmt(d, D, "each switch kind: two fibers, and a driver and its coroutine, alternate 1000 + 1000 times, "
                  "twice each, and return");
    memory_release(&mark);
    return ok;
}

/* --- a stack overflow is caught in the guard page --------------------------- */

static void run_overflowing_fiber(void *arg)
{
    (void)arg;
    fiber_overflow_run();
}

bool fiber_test_guard_page(char *d)
{
    if (!paging_supports(PAGESIZE_4K)) {
        fmt(d, D, "paging unavailable: no guard pages");
        return false;
    }
    struct region_mark mark;
    memory_mark(&mark);
    struct trap_info fi = { 0, 0, 0, 0 };
    paging_enable(PAGESIZE_4K);
    bool caught = trap_expect(TRAP_VEC(EXC_DF) | TRAP_VEC(EXC_PF), run_overflowing_fiber, 0, &fi);
    paging_disable();
    const struct fiber_stack *s = fiber_stack_guarding(fi.cr2);
    bool named = s && s->owner && s->owner[0] == 'o';
    fmt(d, D, "4 KiB stack overflowed: %s (vector %u), cr2 0x%x in the guard page of fiber '%s'",
        caught ? exc_name(fi.vector) : "not caught", fi.vector, fi.cr2, s ? s->owner : "?");
    fiber_overflow_cleanup();
    memory_release(&mark);
    return caught && named;
}
