/* The measurement method, owned by the harness so every benchmark follows
 * it: `warmup` unrecorded runs, then `runs` recorded ones, each run timed
 * by the benchmark's own function (which returns cycles); optionally the
 * empty-region overhead subtracted and a per-operation division; integer
 * statistics; one `result` record per case (with raw samples if raw=1);
 * a `progress` record after every case. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/config.h"

struct bench;

struct bench_param {
    const char *key;
    const char *str; /* NULL: the parameter is the number `num` */
    uint64_t num;
};
#define PARAM_NUM(k, v) { (k), 0, (v) }
#define PARAM_STR(k, v) { (k), (v), 0 }
#define BENCH_MAX_PARAMS 12

struct bench_case {
    const char *name;
    struct bench_param params[BENCH_MAX_PARAMS];
    uint32_t nparams;
    uint64_t per;            /* divide each sample by this (operations per run); 0 or 1: none */
    bool subtract_overhead;  /* subtract the empty timed region from each sample */
};

struct bench_ctx {
    const struct bench *bench;
    const struct config *cfg;
    uint32_t runs, warmup;
    uint32_t done, total; /* cases finished / planned, for progress */
};

/* Cycles of one run of a case. */
typedef uint64_t (*bench_run_fn)(void *arg);

struct fiber;
struct fiber_spec {
    struct fiber *fiber;
    const char *name;
    void (*fn)(void *);
    void *arg;
    uint32_t stack; /* bytes; 0: the default */
};

/* Creates the fibers on a fresh scheduler, times sched_run() until none is
 * ready, and gives their memory back. Cycles, or 0 when they did not fit;
 * *switches (if given) gets the scheduler's switch count. */
uint64_t bench_time_fibers(const struct fiber_spec *specs, uint32_t n, uint64_t *switches);

/* Announce how many cases this benchmark will report (for the progress bar). */
void bench_plan(struct bench_ctx *ctx, uint32_t cases);
void bench_measure(struct bench_ctx *ctx, const struct bench_case *c, bench_run_fn fn, void *arg);
void bench_skip(struct bench_ctx *ctx, const char *case_name, const char *why);
/* The repetitions a benchmark should use: reps= if given, else its default. */
uint32_t bench_reps(const struct bench_ctx *ctx, uint32_t fallback);

#endif
