/* bench ctxsw: cycles per fiber switch.
 *
 * Every switch routine (pushad, callee, fxsave, jump) in both shapes of
 * runtime/pair.h, with an empty work function:
 *   symmetric:  the paper's two fibers running the same loop, so both call
 *               the switch from one call site;
 *   asymmetric: a driver loop in the caller and one coroutine, each calling
 *               the switch from its own call site (as coroutine libraries
 *               are used: a `ret` then goes where the return-stack buffer
 *               does not expect it).
 * Each result is a run's total cycles divided by its switches, nothing
 * subtracted. Beside them, one `loop` case per shape: the same loops with
 * the switch call replaced by a call of an empty function through the same
 * kind of pointer, per switch-equivalent iteration: the switch alone is the
 * difference, which the report computes with its interval. The symmetric
 * switch minus its loop is, by construction, workset's multi - single at
 * size 0 per switch. A routine's four cases are measured in turn, sample by
 * sample, so drift lands on both shapes and the loops alike.
 *
 * rr: N fibers round-robin through the run queue (runtime/fiber.h), each
 * yielding `reps` times: the switch plus the scheduler, with N stacks
 * touched in turn; total cycles per switch, and beside it a loop of calls
 * of an empty function in place of the yields. */
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "runtime/fiber.h"
#include "lib/defaults.h"
#include "runtime/pair.h"
#include "runtime/userprims.h"
#include "kernel/error_record.h"
#include "kernel/finish.h"
#include "lib/fmt.h"
#include "lib/string.h"

#define RR_MAX 64
#define SHAPE_SYMMETRIC "symmetric"
#define SHAPE_ASYMMETRIC "asymmetric"
#define SHAPE_RR "rr"

static void no_work(void *ctx, int which)
{
    (void)ctx, (void)which;
}

static void pair_case(struct bench_case *c, const char *name, const char *routine, const char *shape, uint32_t reps)
{
    *c = (struct bench_case){ .name = name, .per = 2 * (uint64_t)reps };
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("switch", routine);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("shape", shape);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("switches", 2 * (uint64_t)reps);
}

/* The user's routine, before anything is measured: a progress record names it (a hang from here is its), and a
 * switch away and back must keep EBX, ESI, EDI and EBP (runtime/switch.h's switch_lost); NULL, or why it is
 * not measured (an error record says what it lost, and the run ends fail). */
static const char *user_switch_refused(struct bench_ctx *ctx, const char *name)
{
    static const char *const regs[] = { "EBX", "ESI", "EDI", "EBP" };
    bench_running_user(ctx, name, user_switch()->name);
    int64_t lost = switch_lost(SWITCH_USER, 0);
    if (lost <= 0)
        return lost < 0 ? "no memory for a stack to check the routine on" : 0;
    char msg[160];
    uint32_t at = (uint32_t)fmt(msg, sizeof msg, "the user's switch routine '%s' lost", user_switch()->name);
    for (uint32_t i = 0; i < 4; i++)
        if ((uint64_t)lost >> i & 1)
            at += (uint32_t)fmt(msg + at, sizeof msg - at, " %s", regs[i]);
    fmt(msg + at, sizeof msg - at, " across a switch away and back: EBX, ESI, EDI and EBP must survive (lib/userabi.h)");
    error_record("user_switch", msg);
    finish_mark_failed();
    return "the user's switch routine does not keep the callee-saved registers (the error record before this says which)";
}

/* One routine: both shapes and both loops, in turn; `name` is the case's (a built-in's, or the user's routine
 * under "user" or under the built-in's name it stands in for, its own label in `code`). */
static void one_routine(struct bench_ctx *ctx, enum switch_kind k, const char *name, uint32_t reps)
{
    const char *why = switch_unavailable(k);
    if (!why && k == SWITCH_USER)
        why = user_switch_refused(ctx, name);
    if (why) {
        for (int i = 0; i < 4; i++)
            bench_skip(ctx, i < 2 ? name : "loop", why);
        return;
    }
    struct region_mark mark;
    memory_mark(&mark);
    struct fiber_pair pair;
    if (!pair_init(&pair, k, reps, no_work, 0)) {
        for (int i = 0; i < 4; i++)
            bench_skip(ctx, i < 2 ? name : "loop", "no memory for two fiber stacks");
        memory_release(&mark);
        return;
    }
    struct bench_case sym, asym, sym_loop, asym_loop;
    pair_case(&sym, name, name, SHAPE_SYMMETRIC, reps);
    pair_case(&asym, name, name, SHAPE_ASYMMETRIC, reps);
    pair_case(&sym_loop, "loop", name, SHAPE_SYMMETRIC, reps);
    pair_case(&asym_loop, "loop", name, SHAPE_ASYMMETRIC, reps);
    if (k == SWITCH_FXSAVE) {
        sym.params[sym.nparams++] = (struct bench_param)PARAM_STR("save", switch_fpu_method());
        asym.params[asym.nparams++] = (struct bench_param)PARAM_STR("save", switch_fpu_method());
    }
    if (k == SWITCH_USER) {
        sym.params[sym.nparams++] = (struct bench_param)PARAM_STR("code", user_switch()->name);
        asym.params[asym.nparams++] = (struct bench_param)PARAM_STR("code", user_switch()->name);
    }
    /* runs=auto: each switch alone, the shape minus its loop */
    const struct bench_item items[] = {
        { .c = &sym, .fn = pair_timed_symmetric, .arg = &pair, .against = &items[2] },
        { .c = &asym, .fn = pair_timed_asymmetric, .arg = &pair, .against = &items[3] },
        { .c = &sym_loop, .fn = pair_timed_serial, .arg = &pair },
        { .c = &asym_loop, .fn = pair_timed_driver_serial, .arg = &pair },
    };
    bench_measure_set(ctx, items, sizeof items / sizeof items[0]);
    pair_free(&pair);
    memory_release(&mark);
}

/* --- round robin through the run queue -------------------------------------- */

struct rr {
    uint32_t n, reps;
    uint32_t delay; /* delay=: empty calls before every switch (a planted slowdown, tests only) */
    struct fiber fibers[RR_MAX];
};

static void no_yield(void) {}

/* Called through a volatile pointer so the loops keep their calls. */
static void (*volatile no_yield_ptr)(void) = no_yield;

static void rr_fiber(void *arg)
{
    struct rr *r = arg;
    for (uint32_t i = 0; i < r->reps; i++) {
        for (uint32_t d = 0; d < r->delay; d++)
            no_yield_ptr();
        fiber_yield();
    }
}

static struct fiber_spec rr_specs[RR_MAX];

/* Cycles of one round-robin run (0 when the stacks do not fit). */
static int64_t rr_once(struct rr *r, uint64_t *switches)
{
    for (uint32_t i = 0; i < r->n; i++)
        rr_specs[i] = (struct fiber_spec){ &r->fibers[i], "rr", rr_fiber, r, 4096 };
    return bench_time_fibers(rr_specs, r->n, switches);
}

static int64_t run_rr(void *arg) { return rr_once(arg, 0); }

/* rr's loop: rr_fiber's, one call per switch, of an empty function. */
static int64_t run_rr_loop(void *arg)
{
    uint32_t iterations = *(uint32_t *)arg;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < iterations; i++)
        no_yield_ptr();
    return (int64_t)(tsc_end() - t0);
}

static const uint32_t rr_ns[] = CR_DEF_CTXSW_RR_NS;
#define RR_COUNT (sizeof rr_ns / sizeof rr_ns[0])
static struct rr rr_state[RR_COUNT];

/* Every n and the loop in turn. */
static void round_robin(struct bench_ctx *ctx, uint32_t reps)
{
    struct bench_case cases[RR_COUNT + 1];
    struct bench_item items[RR_COUNT + 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < RR_COUNT; i++) {
        struct rr *r = &rr_state[i];
        r->n = rr_ns[i];
        r->delay = ctx->cfg->delay;
        r->reps = reps / rr_ns[i] ? reps / rr_ns[i] : 1; /* about the same switches for every n */
        uint64_t switches;
        if (!rr_once(r, &switches)) {
            bench_skip(ctx, "rr", "no memory for the fiber stacks");
            continue;
        }
        struct bench_case *c = &cases[n];
        *c = (struct bench_case){ .name = "rr", .per = switches };
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("n", rr_ns[i]);
        c->params[c->nparams++] = (struct bench_param)PARAM_STR("switch", "callee");
        c->params[c->nparams++] = (struct bench_param)PARAM_STR("shape", SHAPE_RR);
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", r->reps);
        c->params[c->nparams++] = (struct bench_param)PARAM_NUM("switches", switches);
        items[n] = (struct bench_item){ .c = c, .fn = run_rr, .arg = r };
        n++;
    }
    static uint32_t loop_iterations;
    loop_iterations = reps;
    struct bench_case *c = &cases[n];
    *c = (struct bench_case){ .name = "loop", .per = reps };
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("switch", "callee");
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("shape", SHAPE_RR);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("switches", reps);
    items[n] = (struct bench_item){ .c = c, .fn = run_rr_loop, .arg = &loop_iterations };
    for (uint32_t i = 0; i < n; i++) /* runs=auto: each round robin minus the loop */
        items[i].against = &items[n];
    n++;
    bench_measure_set(ctx, items, n);
}

static void run(struct bench_ctx *ctx)
{
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_CTXSW_PAPER_REPS : CR_DEF_CTXSW_REPS);
    /* the user's routine (--switch-file): in place of the built-in it stands in for, else a case of its own */
    const struct user_switch *u = user_switch();
    bool own = u && !u->as[0];
    bench_plan(ctx, 4 * (SWITCH_COUNT + own) + RR_COUNT + 1);
    for (int k = 0; k < SWITCH_COUNT; k++) {
        const char *name = switch_name((enum switch_kind)k);
        bool instead = u && str_eq(u->as, name);
        one_routine(ctx, instead ? SWITCH_USER : (enum switch_kind)k, name, reps);
    }
    if (own)
        one_routine(ctx, SWITCH_USER, switch_name(SWITCH_USER), reps);
    round_robin(ctx, reps);
}

const struct bench bench_ctxsw = {
    .name = "ctxsw",
    .what = "cycles per fiber switch: pushad, callee, fxsave, jump, each symmetric and asymmetric; round-robin over n fibers",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
