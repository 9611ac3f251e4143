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
#include "arch/x86.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "runtime/pair.h"

#define PAPER_REPS 100000
/* Quick suite: reps so that every size writes about QUICK_BYTES per buffer
 * per series, so each size costs about the same; at least QUICK_MIN_REPS
 * (a buffer refilled once or twice shows no reuse, hence no cache effect)
 * and at most QUICK_MAX_REPS (small sizes). */
#define QUICK_BYTES (8u << 20)
#define QUICK_MIN_REPS 8
#define QUICK_MAX_REPS 10000
#define MAX_DEFAULT_SIZES 64

_Static_assert(SWITCH_PUSHAD == 0 && SWITCH_CALLEE == 1 && SWITCH_FXSAVE == 2,
               "switch= values are listed in enum switch_kind order (kernel/config.c)");

struct workset {
    uint8_t *buf[2];
    uint32_t size;
    uint32_t reps;
    enum fill_kind fill;
    struct fiber_pair pair;
};

static void zero_tail(uint8_t *buf, uint32_t from, uint32_t size)
{
    for (uint32_t i = from; i < size; i++)
        ((volatile uint8_t *)buf)[i] = 0;
}

/* The zeroing kernels. loop: one 32-bit store per iteration (store-bound:
 * at most one store per cycle, whatever the cache); stos: rep stosd, which
 * the CPU turns into line-sized writes (bandwidth-bound: it shows the cache
 * hierarchy); sse: 16-byte stores. */
static void refill(void *ctx, int which)
{
    struct workset *w = ctx;
    uint8_t *buf = w->buf[which];
    uint32_t size = w->size;
    switch (w->fill) {
    case FILL_LOOP:
        store_loop_dwords(buf, size / 4);
        zero_tail(buf, size & ~3u, size);
        break;
    case FILL_SSE:
        sse_store_blocks(buf, size / 16);
        rep_stosd(buf + (size & ~15u), 0, (size & 15) / 4);
        zero_tail(buf, size & ~3u, size);
        break;
    default:
        rep_stosd(buf, 0, size / 4);
        zero_tail(buf, size & ~3u, size);
        break;
    }
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

/* 0, then 2^k and 3*2^(k-1) bytes (1, 2, 3, 4, 6, 8, 12, ...) up to maxsize. */
static uint32_t default_sizes(uint64_t maxsize, uint64_t *out)
{
    uint32_t n = 0;
    out[n++] = 0;
    for (uint64_t p = 1; p <= maxsize && n + 2 <= MAX_DEFAULT_SIZES; p <<= 1) {
        out[n++] = p;
        if (p >= 2 && p + p / 2 <= maxsize)
            out[n++] = p + p / 2;
    }
    return n;
}

static uint32_t reps_for(const struct bench_ctx *ctx, uint64_t size)
{
    if (ctx->cfg->given[KEY_REPS])
        return ctx->cfg->reps;
    if (ctx->cfg->suite == SUITE_PAPER)
        return PAPER_REPS;
    uint64_t r = QUICK_BYTES / (size ? size : 1);
    return r < QUICK_MIN_REPS ? QUICK_MIN_REPS : r > QUICK_MAX_REPS ? QUICK_MAX_REPS : (uint32_t)r;
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
    static uint64_t defaults[MAX_DEFAULT_SIZES];
    const struct config *cfg = ctx->cfg;
    const uint64_t *sizes = cfg->sizes;
    uint32_t nsizes = cfg->nsizes;
    if (!cfg->given[KEY_SIZES]) {
        nsizes = default_sizes(cfg->maxsize, defaults);
        sizes = defaults;
    }
    bench_plan(ctx, 2 * nsizes);
    static struct workset w;
    for (uint32_t i = 0; i < nsizes; i++) {
        struct region_mark mark;
        memory_mark(&mark);
        w.size = (uint32_t)sizes[i];
        w.reps = reps_for(ctx, sizes[i]);
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
