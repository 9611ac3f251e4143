#include "bench/sweep.h"

#define PAPER_REPS 100000
#ifdef CLEANROOM_HOSTED
/* Real caches: a series long enough (5-20 ms: a cached buffer fills at
 * 100-150 GB/s on the development machine, one from L3 or DRAM at 20-30)
 * that a timer tick is a small part of it, and enough refills (at least 16)
 * that each buffer is reused from the cache many times over. The cap keeps
 * the smallest sizes, where a refill costs ~10 ns, near 4 ms a series; with
 * pages=both the quick sweep takes ~15 s there. */
#define QUICK_BYTES (512u << 20)
#define QUICK_MIN_REPS 16
#define QUICK_MAX_REPS 200000
#else
/* An emulator models no cache: a few MiB show every shape. */
#define QUICK_BYTES (4u << 20)
#define QUICK_MIN_REPS 4
#define QUICK_MAX_REPS 10000
#endif

uint32_t sweep_sizes(const struct config *cfg, const uint64_t **sizes)
{
    static uint64_t defaults[SWEEP_MAX_SIZES];
    if (cfg->given[KEY_SIZES]) {
        *sizes = cfg->sizes;
        return cfg->nsizes;
    }
    uint32_t n = 0;
    defaults[n++] = 0;
    for (uint64_t p = 1; p <= cfg->maxsize && n + 2 <= SWEEP_MAX_SIZES; p <<= 1) {
        defaults[n++] = p;
        if (p >= 2 && p + p / 2 <= cfg->maxsize)
            defaults[n++] = p + p / 2;
    }
    *sizes = defaults;
    return n;
}

uint32_t sweep_reps(const struct bench_ctx *ctx, uint64_t size)
{
    if (ctx->cfg->given[KEY_REPS])
        return ctx->cfg->reps;
    if (ctx->cfg->suite == SUITE_PAPER)
        return PAPER_REPS;
    uint64_t r = QUICK_BYTES / (size ? size : 1);
    return r < QUICK_MIN_REPS ? QUICK_MIN_REPS : r > QUICK_MAX_REPS ? QUICK_MAX_REPS : (uint32_t)r;
}
