#include "bench/harness.h"

#include "arch/paging.h"
#include "arch/tsc.h"
#include "bench/registry.h"
#include "bench/stats.h"
#include "kernel/console.h"
#include "kernel/fault.h"
#include "kernel/memory.h"
#include "kernel/record.h"
#include "kernel/string.h"
#include "kernel/wire.h"
#include "runtime/fiber.h"

static void progress(struct bench_ctx *ctx)
{
    rec_begin(REC_PROGRESS);
    rec_str("bench", ctx->bench->name);
    rec_u64("done", ctx->done);
    rec_u64("total", ctx->total);
    rec_end();
    console_status(" cleanroom: %s  case %u/%u", ctx->bench->name, ctx->done, ctx->total);
}

void bench_plan(struct bench_ctx *ctx, uint32_t cases)
{
    ctx->total = cases;
    ctx->done = 0;
    progress(ctx);
}

uint32_t bench_reps(const struct bench_ctx *ctx, uint32_t fallback)
{
    return ctx->cfg->given[KEY_REPS] ? ctx->cfg->reps : fallback;
}

static void case_done(struct bench_ctx *ctx)
{
    ctx->done++;
    if (ctx->done > ctx->total)
        ctx->total = ctx->done;
    progress(ctx);
    fault_set_running(ctx->bench->name, 0);
}

static bool has_param(const struct bench_case *c, const char *key)
{
    for (uint32_t i = 0; i < c->nparams; i++)
        if (str_eq(c->params[i].key, key))
            return true;
    return false;
}

/* The case's own parameters, then the paging state it ran under (every
 * result says whether paging was on, unless the case says it itself). */
static void params(const struct bench_ctx *ctx, const struct bench_case *c)
{
    rec_obj_begin("params");
    for (uint32_t i = 0; i < c->nparams; i++) {
        if (c->params[i].str)
            rec_str(c->params[i].key, c->params[i].str);
        else
            rec_u64(c->params[i].key, c->params[i].num);
    }
    if (!has_param(c, "paging"))
        rec_str("paging", paging_mode_name());
    if (!has_param(c, "pagesize"))
        rec_str("pagesize", config_value_name(ctx->cfg, KEY_PAGESIZE));
    rec_obj_end();
}

void bench_skip(struct bench_ctx *ctx, const char *case_name, const char *why)
{
    rec_begin(REC_SKIP);
    rec_str("what", case_name);
    rec_str("bench", ctx->bench->name);
    rec_str("why", why);
    rec_end();
    console_say(VGA_YELLOW, "  %s/%s: skipped: %s", ctx->bench->name, case_name, why);
    case_done(ctx);
}

void bench_measure(struct bench_ctx *ctx, const struct bench_case *c, bench_run_fn fn, void *arg)
{
    struct region_mark mark;
    memory_mark(&mark);
    uint64_t *samples = memory_alloc(ctx->runs * (uint32_t)sizeof(uint64_t), 8);
    if (!samples) {
        bench_skip(ctx, c->name, "no memory for the samples");
        return;
    }
    fault_set_running(ctx->bench->name, c->name);
    uint64_t sub = c->subtract_overhead ? tsc_info()->overhead : 0;
    uint64_t per = c->per > 1 ? c->per : 1;
    for (uint32_t i = 0; i < ctx->warmup; i++)
        fn(arg);
    for (uint32_t i = 0; i < ctx->runs; i++) {
        uint64_t s = fn(arg);
        s = s > sub ? s - sub : 0;
        samples[i] = s / per;
    }

    rec_begin(REC_RESULT);
    rec_str("bench", ctx->bench->name);
    rec_str("case", c->name);
    params(ctx, c);
    rec_str("unit", "cycles");
    if (ctx->cfg->raw) { /* in run order, before stats sorts them */
        rec_arr_begin("samples");
        for (uint32_t i = 0; i < ctx->runs; i++)
            rec_u64(0, samples[i]);
        rec_arr_end();
    }
    struct stats st;
    stats_compute(samples, ctx->runs, &st);
    rec_u64("n", st.n);
    rec_u64("min", st.min);
    rec_u64("med", st.med);
    rec_u64("max", st.max);
    rec_u64("mean", st.mean);
    rec_u64("per", per);
    rec_u64("overhead", sub);
    rec_end();
    console_say(VGA_GREY, "  %s/%-14s med %8llu  min %8llu  max %8llu cycles", ctx->bench->name, c->name,
                (unsigned long long)st.med, (unsigned long long)st.min, (unsigned long long)st.max);
    memory_release(&mark);
    case_done(ctx);
}

uint64_t bench_time_fibers(const struct fiber_spec *specs, uint32_t n, uint64_t *switches)
{
    struct region_mark mark;
    memory_mark(&mark);
    sched_init(SWITCH_CALLEE);
    uint32_t made = 0;
    while (made < n && fiber_create(specs[made].fiber, specs[made].name, specs[made].fn, specs[made].arg,
                                    specs[made].stack))
        made++;
    uint64_t cycles = 0;
    if (made == n) {
        uint64_t t0 = tsc_begin();
        sched_run();
        cycles = tsc_end() - t0;
    }
    if (switches)
        *switches = sched_switches();
    for (uint32_t i = 0; i < made; i++)
        fiber_release(specs[i].fiber);
    memory_release(&mark);
    return cycles;
}
