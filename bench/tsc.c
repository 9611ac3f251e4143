/* bench tsc: what reading the clock itself costs, for each way of reading
 * it. A sample is the difference of two back-to-back reads (nothing
 * subtracted): the floor under every other measurement. */
#include "arch/cpu.h"
#include "arch/tsc.h"
#include "bench/registry.h"

static int64_t pair_rdtsc(void *arg)
{
    (void)arg;
    uint64_t a = rdtsc();
    uint64_t b = rdtsc();
    return (int64_t)(b - a);
}

static int64_t pair_lfence(void *arg)
{
    (void)arg;
    lfence();
    uint64_t a = rdtsc();
    lfence();
    uint64_t b = rdtsc();
    lfence();
    return (int64_t)(b - a);
}

static int64_t pair_rdtscp(void *arg)
{
    (void)arg;
    uint64_t a = rdtscp(0);
    uint64_t b = rdtscp(0);
    return (int64_t)(b - a);
}

static int64_t pair_cpuid(void *arg)
{
    (void)arg;
    cpuid_serialize();
    uint64_t a = rdtsc();
    cpuid_serialize();
    uint64_t b = rdtsc();
    return (int64_t)(b - a);
}

/* The harness's own timed region with nothing in it. */
static int64_t empty_region(void *arg)
{
    (void)arg;
    uint64_t a = tsc_begin();
    uint64_t b = tsc_end();
    return (int64_t)(b - a);
}

static const struct {
    const char *name;
    bench_run_fn fn;
    enum cpu_feature needs;
    const char *why;
} cases[] = {
    { "rdtsc", pair_rdtsc, FEAT_TSC, "" },
    { "rdtsc_lfence", pair_lfence, FEAT_SSE2, "no lfence: the CPU lacks SSE2" },
    { "rdtscp", pair_rdtscp, FEAT_RDTSCP, "the CPU lacks rdtscp" },
    { "rdtsc_cpuid", pair_cpuid, FEAT_TSC, "" },
    { "empty", empty_region, FEAT_TSC, "" },
};

static void run(struct bench_ctx *ctx)
{
    const uint32_t n = sizeof cases / sizeof cases[0];
    bench_plan(ctx, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!cpu_has(cases[i].needs)) {
            bench_skip(ctx, cases[i].name, cases[i].why);
            continue;
        }
        struct bench_case c = { .name = cases[i].name, .nparams = 1 };
        c.params[0] = (struct bench_param)PARAM_STR("serialize", tsc_serialize_name(tsc_mode));
        bench_measure(ctx, &c, cases[i].fn, 0);
    }
}

const struct bench bench_tsc = {
    .name = "tsc",
    .what = "cost of reading the time stamp counter, per serialisation",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
