/* bench workset: Klimiankou 2018, section 3.2. Two buffers of the same
 * size S are refilled with zeroes `reps` times each:
 *   single: buffer A reps times, then buffer B reps times;
 *   multi:  two fibers, each refills its own buffer once and switches to the
 *           other (runtime/pair.h, the switch= routine), until both have
 *           refilled reps times: 2*reps refills and 2*reps switches.
 * The whole series is one sample (one TSC pair); the harness does the
 * warm-up series and the `runs` recorded ones. The difference multi - single
 * is the cost of concurrency: the switches plus the cache refills they force.
 * Both scenarios use the same buffers, allocated before either runs. */
#include "arch/cpu.h"
#include "arch/mmu.h"
#include "arch/tsc.h"
#include "bench/fill_user.h"
#include "bench/registry.h"
#include "bench/sweep.h"
#include "kernel/memory.h"
#include "runtime/pair.h"

_Static_assert(SWITCH_PUSHAD == 0 && SWITCH_CALLEE == 1 && SWITCH_FXSAVE == 2,
               "switch= values are listed in enum switch_kind order (kernel/config.c)");

struct workset {
    uint8_t *buf[2];
    uint32_t size;
    uint32_t reps;
    enum fill_kind fill;
    struct fiber_pair pair;
};

static void refill(void *ctx, int which)
{
    struct workset *w = ctx;
    fill_buffer(w->buf[which], w->size, w->fill);
}

/* The same loop as the fibers' minus the switches (runtime/pair.h), so
 * that multi - single is the switches and their cache effects. */
static uint64_t run_single(void *arg)
{
    struct workset *w = arg;
    uint64_t t0 = tsc_begin();
    pair_run_serial(&w->pair);
    return tsc_end() - t0;
}

static uint64_t run_multi(void *arg)
{
    struct workset *w = arg;
    pair_prepare(&w->pair);
    uint64_t t0 = tsc_begin();
    pair_run(&w->pair);
    return tsc_end() - t0;
}

static const char *unavailable(const struct config *cfg)
{
    if (cfg->fill == FILL_SSE && !cpu_has(FEAT_SSE))
        return "fill=sse: the CPU lacks SSE";
    return switch_unavailable((enum switch_kind)cfg->switch_kind);
}

static void size_case(struct bench_case *c, const char *name, const struct workset *w, const struct config *cfg)
{
    *c = (struct bench_case){ .name = name, .subtract_overhead = true };
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("size", w->size);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", w->reps);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("fill", config_value_name(cfg, KEY_FILL));
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("switch", config_value_name(cfg, KEY_SWITCH));
}

static void run(struct bench_ctx *ctx)
{
    const struct config *cfg = ctx->cfg;
    const uint64_t *sizes;
    uint32_t nsizes = sweep_sizes(cfg, &sizes);
    bench_plan(ctx, 2 * nsizes);
    static struct workset w;
    for (uint32_t i = 0; i < nsizes; i++) {
        struct region_mark mark;
        memory_mark(&mark);
        w.size = (uint32_t)sizes[i];
        w.reps = sweep_reps(ctx, sizes[i]);
        w.fill = (enum fill_kind)cfg->fill;
        /* 4 MiB alignment keeps a buffer within as few large pages as it can */
        uint32_t align = sizes[i] >= LARGE_PAGE_SIZE ? LARGE_PAGE_SIZE : PAGE_SIZE;
        w.buf[0] = memory_alloc(w.size, align);
        w.buf[1] = w.buf[0] ? memory_alloc(w.size, align) : 0;
        bool fits = w.buf[1] && pair_init(&w.pair, (enum switch_kind)cfg->switch_kind, w.reps, refill, &w);
        struct bench_case single, multi;
        size_case(&single, "single", &w, cfg);
        size_case(&multi, "multi", &w, cfg);
        if (!fits) {
            bench_skip(ctx, "single", "two buffers of this size do not fit in memory");
            bench_skip(ctx, "multi", "two buffers of this size do not fit in memory");
        } else {
            bench_measure(ctx, &single, run_single, &w);
            bench_measure(ctx, &multi, run_multi, &w);
            pair_free(&w.pair);
        }
        memory_release(&mark);
    }
}

const struct bench bench_workset = {
    .name = "workset",
    .what = "working-set sweep, one buffer after the other vs two fibers (Klimiankou 2018)",
    .in_quick = true,
    .unavailable = unavailable,
    .run = run,
};
