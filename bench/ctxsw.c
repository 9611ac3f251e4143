/* bench ctxsw: cycles per fiber switch.
 *
 * pushad, callee, fxsave: the paper's two-fiber ping-pong (runtime/pair.h)
 * with an empty work function, minus the same work serialised without
 * fibers (pair_run_serial): what remains is the switch, its call included.
 * It is, by construction, workset's multi - single at size 0 per switch.
 * rr: N fibers round-robin through the run queue (runtime/fiber.h), each
 * yielding `reps` times: the switch plus the scheduler, with N stacks
 * touched in turn. */
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "runtime/fiber.h"
#include "runtime/pair.h"

#define DEFAULT_REPS 10000
#define PAPER_REPS 100000
#define RR_MAX 64

static void no_work(void *ctx, int which)
{
    (void)ctx, (void)which;
}

static void __attribute__((fastcall)) no_switch(uint32_t *word) { (void)word; }

/* Called through volatile pointers so the baseline keeps its calls. */
static void (*volatile work_ptr)(void *, int) = no_work;
static switch_fn volatile no_switch_ptr = no_switch;

/* rr's baseline: the yield loop's calls without the scheduler. */
static int64_t baseline(uint32_t iterations)
{
    uint32_t word = 0;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < iterations; i++) {
        work_ptr(0, (int)(i & 1));
        no_switch_ptr(&word);
    }
    return (int64_t)(tsc_end() - t0);
}

static int64_t run_pair(void *arg) { return pair_switch_cycles(arg); }

struct rr {
    uint32_t n, reps;
    struct fiber fibers[RR_MAX];
};

static void rr_fiber(void *arg)
{
    struct rr *r = arg;
    for (uint32_t i = 0; i < r->reps; i++)
        fiber_yield();
}

static struct fiber_spec rr_specs[RR_MAX];

/* Cycles of one round-robin run (0 when the stacks do not fit). */
static int64_t rr_once(struct rr *r, uint64_t *switches)
{
    for (uint32_t i = 0; i < r->n; i++)
        rr_specs[i] = (struct fiber_spec){ &r->fibers[i], "rr", rr_fiber, r, 4096 };
    return bench_time_fibers(rr_specs, r->n, switches);
}

/* The scheduler's run minus its calls alone: signed, as measured (a
 * difference inside the noise is negative, not 0). */
static int64_t run_rr(void *arg)
{
    struct rr *r = arg;
    uint64_t switches;
    int64_t cycles = rr_once(r, &switches);
    return cycles - baseline((uint32_t)switches);
}

static struct rr rr_state;

static void run(struct bench_ctx *ctx)
{
    static const uint32_t ns[] = { 2, 4, 8, 16, 64 };
    const uint32_t nn = sizeof ns / sizeof ns[0];
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? PAPER_REPS : DEFAULT_REPS);
    bench_plan(ctx, SWITCH_COUNT + nn);

    for (int k = 0; k < SWITCH_COUNT; k++) {
        const char *name = switch_name((enum switch_kind)k);
        const char *why = switch_unavailable((enum switch_kind)k);
        if (why) {
            bench_skip(ctx, name, why);
            continue;
        }
        struct region_mark mark;
        memory_mark(&mark);
        struct fiber_pair pair;
        if (!pair_init(&pair, (enum switch_kind)k, reps, no_work, 0)) {
            bench_skip(ctx, name, "no memory for two fiber stacks");
            memory_release(&mark);
            continue;
        }
        struct bench_case c = { .name = name, .per = 2 * (uint64_t)reps };
        c.params[c.nparams++] = (struct bench_param)PARAM_STR("switch", name);
        c.params[c.nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
        if (k == SWITCH_FXSAVE)
            c.params[c.nparams++] = (struct bench_param)PARAM_STR("save", switch_fpu_method());
        bench_measure(ctx, &c, run_pair, &pair);
        pair_free(&pair);
        memory_release(&mark);
    }

    for (uint32_t i = 0; i < nn; i++) {
        rr_state.n = ns[i];
        rr_state.reps = reps / ns[i] ? reps / ns[i] : 1; /* about the same switches for every n */
        uint64_t switches;
        if (!rr_once(&rr_state, &switches)) {
            bench_skip(ctx, "rr", "no memory for the fiber stacks");
            continue;
        }
        struct bench_case c = { .name = "rr", .per = switches };
        c.params[c.nparams++] = (struct bench_param)PARAM_NUM("n", ns[i]);
        c.params[c.nparams++] = (struct bench_param)PARAM_STR("switch", "callee");
        c.params[c.nparams++] = (struct bench_param)PARAM_NUM("reps", rr_state.reps);
        c.params[c.nparams++] = (struct bench_param)PARAM_NUM("switches", switches);
        bench_measure(ctx, &c, run_rr, &rr_state);
    }
}

const struct bench bench_ctxsw = {
    .name = "ctxsw",
    .what = "cycles per fiber switch: pushad, callee, fxsave; round-robin over n fibers",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
