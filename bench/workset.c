/* bench workset: Klimiankou 2018, section 3.2. Two buffers of the same
 * size S are refilled with zeroes `reps` times each:
 *   single: buffer A reps times, then buffer B reps times;
 *   multi:  two fibers, each refills its own buffer once and switches to the
 *           other (runtime/pair.h, the switch= routine), until both have
 *           refilled reps times: 2*reps refills and 2*reps switches.
 * The whole series is one sample (one TSC pair); the harness does the
 * warm-up series and the `runs` recorded ones. The difference multi - single
 * is the cost of concurrency: the switches plus the cache refills they force.
 * Both scenarios use the same buffers, allocated before either runs.
 *
 *   parallel (cpus= of 2 or more): two workers on two CPUs, each refilling
 *           its own buffer reps times at once (bench/parallel.h): 2*reps
 *           refills and no switch; the time from their common start to the
 *           later one's finish. With one CPU there is no such case, and the
 *           records are what they were before it existed.
 * Everything one size compares is measured in turn, sample by sample:
 * single, multi (and parallel), in every memory mode (bench/vmmode.h: paging off and on
 * in the kernel, 4 KiB and 2 MiB pages hosted), so drift of the machine
 * lands on every point alike instead of reading as a difference. */
#include "arch/cpu.h"
#include "arch/tsc.h"
#include "bench/fill_user.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "bench/sweep.h"
#include "bench/vmmode.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "runtime/pair.h"

_Static_assert(SWITCH_PUSHAD == 0 && SWITCH_CALLEE == 1 && SWITCH_FXSAVE == 2 && SWITCH_JUMP == 3 &&
                   SWITCH_COUNT == 4,
               "switch= values are listed in enum switch_kind order (lib/config.c)");

#define PARALLEL_CPUS 2u
#define SCENARIOS_MAX 3u
static const char *const scenario_names[SCENARIOS_MAX] = { "single", "multi", "parallel" };

struct workset {
    uint8_t *buf[2]; /* the current mode's pair (select_mode) */
    uint32_t size;
    uint32_t reps;
    enum fill_kind fill;
    struct fiber_pair pair;
};

/* What the hooks of one memory mode's items need. */
struct mode {
    struct workset *w;
    const struct config *cfg;
    const struct vm_buffers *vb;
    uint32_t m;
    struct parallel_tally tally; /* parallel's samples re-run (hosted) */
};

static void refill(void *ctx, int which)
{
    struct workset *w = ctx;
    fill_buffer(w->buf[which], w->size, w->fill);
}

/* The same loop as the fibers', an empty call in place of each switch
 * (runtime/pair.h), so that multi - single is the switches and their cache
 * effects: at size 0, ctxsw's symmetric case minus its loop. */
/* Not runtime/pair.h's pair_timed_serial/_symmetric: tests/test_workset.py
 * pins multi - single to the instruction under icount, and these two
 * wrappers' timed regions are what it was pinned on (the shared ones
 * differ by 8 instructions of call set-up). */
static int64_t run_single(void *arg)
{
    struct workset *w = arg;
    uint64_t t0 = tsc_begin();
    pair_run_serial(&w->pair);
    return (int64_t)(tsc_end() - t0);
}

static int64_t run_multi(void *arg)
{
    struct workset *w = arg;
    pair_prepare(&w->pair);
    uint64_t t0 = tsc_begin();
    pair_run(&w->pair);
    return (int64_t)(tsc_end() - t0);
}

/* Worker w of `parallel`, on CPU w: buffer w, reps times. */
static void refill_alone(uint32_t worker, void *arg)
{
    struct workset *w = arg;
    for (uint32_t i = 0; i < w->reps; i++)
        refill(w, (int)worker);
}

static int64_t parallel_once(void *arg) { return parallel_run(PARALLEL_CPUS, refill_alone, arg); }

static int64_t run_parallel(void *arg)
{
    struct mode *md = arg;
    return parallel_undisturbed(parallel_once, md->w, &md->tally);
}

/* Before every multi and parallel sample: the mode's buffers (idempotent,
 * no switch). */
static void select_mode(void *arg)
{
    struct mode *md = arg;
    md->w->buf[0] = md->vb->buf[md->m][0];
    md->w->buf[1] = md->vb->buf[md->m][1];
}

/* Before every single sample, a mode's first: its buffers and its paging. */
static void enter_mode(void *arg)
{
    struct mode *md = arg;
    select_mode(md);
    vm_enter(md->cfg, md->m);
}

static void mode_params(struct bench_case *c, void *arg)
{
    const struct mode *md = arg;
    vm_params(md->cfg, md->m, md->vb, c);
}

static void parallel_params(struct bench_case *c, void *arg)
{
    struct mode *md = arg;
    mode_params(c, md);
    parallel_tally_params(c, &md->tally);
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

/* Every (mode, scenario) of one size in turn: per round, for each mode,
 * its paging, then single, then multi (then parallel, with scenarios = 3);
 * the records in the same order. */
static void one_size(struct bench_ctx *ctx, struct workset *w, uint32_t modes, uint32_t scenarios)
{
    const struct config *cfg = ctx->cfg;
    struct region_mark mark;
    memory_mark(&mark);
    struct vm_buffers vb;
    bool have = vm_alloc(cfg, w->size, &vb);
    bool fits = have && pair_init(&w->pair, (enum switch_kind)cfg->switch_kind, w->reps, refill, w);
    if (!fits) {
        for (uint32_t m = 0; m < modes; m++)
            for (uint32_t sc = 0; sc < scenarios; sc++)
                bench_skip(ctx, scenario_names[sc], "two buffers of this size do not fit in memory");
    } else {
        struct bench_case single, multi, parallel;
        size_case(&single, "single", w, cfg);
        size_case(&multi, "multi", w, cfg);
        size_case(&parallel, "parallel", w, cfg);
        parallel.params[parallel.nparams++] = (struct bench_param)PARAM_NUM("cpus", PARALLEL_CPUS);
        parallel_sweep_params(&parallel, PARALLEL_CPUS);
        struct mode md[VM_MODES_MAX];
        struct bench_item items[SCENARIOS_MAX * VM_MODES_MAX];
        uint32_t n = 0;
        for (uint32_t m = 0; m < modes; m++) {
            /* a mode the host did not give these buffers (hosted pages=2m
             * without huge pages) is skipped here; the others still run */
            const char *why = vm_unavailable(cfg, m, &vb);
            if (why) {
                for (uint32_t sc = 0; sc < scenarios; sc++)
                    bench_skip(ctx, scenario_names[sc], why);
                continue;
            }
            md[m] = (struct mode){ .w = w, .cfg = cfg, .vb = &vb, .m = m };
            items[n++] = (struct bench_item){ .c = &single, .fn = run_single, .arg = w, .before = enter_mode,
                                              .late_params = mode_params, .hook_arg = &md[m] };
            /* runs=auto: multi - single (and parallel - single) are the set's key quantities */
            const struct bench_item *single_item = &items[n - 1];
            items[n++] = (struct bench_item){ .c = &multi, .fn = run_multi, .arg = w, .before = select_mode,
                                              .late_params = mode_params, .hook_arg = &md[m],
                                              .against = single_item };
            if (scenarios == SCENARIOS_MAX)
                items[n++] = (struct bench_item){ .c = &parallel, .fn = run_parallel, .arg = &md[m],
                                                  .before = select_mode, .late_params = parallel_params,
                                                  .hook_arg = &md[m], .against = single_item };
        }
        if (n)
            bench_measure_set(ctx, items, n);
        pair_free(&w->pair);
    }
    if (have)
        vm_free(&vb);
    memory_release(&mark);
}

static void run(struct bench_ctx *ctx)
{
    const struct config *cfg = ctx->cfg;
    const uint64_t *sizes;
    uint32_t nsizes = sweep_sizes(cfg, &sizes);
    const char *why = 0;
    uint32_t modes = vm_modes(cfg, &why);
    /* parallel needs a second CPU; with one the set is what it always was */
    uint32_t scenarios = parallel_unavailable(PARALLEL_CPUS) ? 2 : SCENARIOS_MAX;
    bench_plan(ctx, scenarios * modes * nsizes + (why ? 1 : 0));
    if (why) /* the suite skips the benchmark when no mode runs; here one of two is missing */
        bench_skip(ctx, "workset", why);
    static struct workset w;
    for (uint32_t i = 0; i < nsizes; i++) {
        w.size = (uint32_t)sizes[i];
        w.reps = sweep_reps(ctx, sizes[i]);
        w.fill = (enum fill_kind)cfg->fill;
        one_size(ctx, &w, modes, scenarios);
    }
    vm_leave();
}

const struct bench bench_workset = {
    .name = "workset",
    .what = "working-set sweep, one buffer after the other vs two fibers (Klimiankou 2018)",
    .in_quick = true,
    .vm_axis = true,
    .unavailable = unavailable,
    .run = run,
};
