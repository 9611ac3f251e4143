#include "bench/sweep.h"

#include "lib/defaults.h"

/* The quick sweep's refills per series (lib/defaults.h says why each). */
#ifdef CLEANROOM_HOSTED
#define QUICK_BYTES CR_DEF_SWEEP_QUICK_BYTES_HOSTED
#define QUICK_MIN_REPS CR_DEF_SWEEP_QUICK_MIN_REPS_HOSTED
#define QUICK_MAX_REPS CR_DEF_SWEEP_QUICK_MAX_REPS_HOSTED
#else
#define QUICK_BYTES CR_DEF_SWEEP_QUICK_BYTES_KERNEL
#define QUICK_MIN_REPS CR_DEF_SWEEP_QUICK_MIN_REPS_KERNEL
#define QUICK_MAX_REPS CR_DEF_SWEEP_QUICK_MAX_REPS_KERNEL
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
        return CR_DEF_SWEEP_PAPER_REPS;
    uint64_t r = QUICK_BYTES / (size ? size : 1);
    return r < QUICK_MIN_REPS ? QUICK_MIN_REPS : r > QUICK_MAX_REPS ? QUICK_MAX_REPS : (uint32_t)r;
}
