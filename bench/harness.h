/* The measurement method, owned by the harness so every benchmark follows
 * it: `warmup` unrecorded runs, then `runs` recorded ones, each run timed
 * by the benchmark's own function (which returns cycles); optionally the
 * empty-region overhead subtracted and a per-operation division; integer
 * statistics; one `result` record per case (with raw samples if raw=1);
 * a `progress` record after every case.
 *
 * Cases that are compared with each other are measured as one set, in
 * turn, sample by sample (A B A B ...): drift of the machine over the run
 * (clock, temperature, a neighbour on the host) then lands on every case
 * alike instead of reading as a difference between them.
 *
 * Samples are signed and never clamped: a difference inside the noise
 * (a run minus its baseline, minus the timing overhead) may be negative,
 * and is recorded as measured. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/config.h"

struct bench_param {
    const char *key;
    const char *str; /* NULL: the parameter is the number `num` */
    uint64_t num;
};
#define PARAM_NUM(k, v) { (k), 0, (v) }
#define PARAM_STR(k, v) { (k), (v), 0 }
#define BENCH_MAX_PARAMS 20 /* smplocks: 15 at most today */

struct bench_case {
    const char *name;
    struct bench_param params[BENCH_MAX_PARAMS];
    uint32_t nparams;
    uint64_t per;            /* divide each sample by this (operations per run); 0 or 1: none */
    bool subtract_overhead;  /* subtract the empty timed region from each sample */
    /* Keep each sample whole, the total over `per` operations, and say so
     * (the record's `sums`): the host divides, keeping the decimals a
     * figure of a few cycles per operation needs (integer division here
     * would round it toward zero). */
    bool sums;
};

struct bench_ctx;

/* A benchmark: one per file bench/NAME.c, listed in bench/registry.def. */
struct bench {
    const char *name;
    const char *what;               /* one line for docs and the screen */
    bool in_quick;                  /* part of suite=quick */
    bool in_smp;                    /* part of suite=smp (needs cpus= of 2 or more) */
    bool needs_paging;              /* runs only with paging on (app/suite.c) */
    bool by_name_only;              /* only when bench= names it (it measures the user's code): in no suite */
    /* Compares the memory modes itself (bench/vmmode.h: paging off and on in
     * the kernel, 4 KiB and 2 MiB pages hosted), sample by sample: the suite
     * runs it once per boot, in the first pass it is selected for, leaves
     * paging to its vm_enter/vm_leave, and skips it (with vm_modes' reason)
     * when no mode can run. */
    bool vm_axis;
    /* NULL when the benchmark can run here, else why not (skip record). */
    const char *(*unavailable)(const struct config *cfg);
    void (*run)(struct bench_ctx *ctx);
};

struct bench_ctx {
    const struct bench *bench;
    const struct config *cfg;
    uint32_t runs, warmup;
    uint32_t done, total; /* cases finished / planned, for progress */
};

/* Cycles of one run of a case: a difference of TSC readings (or of two
 * such differences), so it may be negative when what it measures is
 * inside the noise. */
typedef int64_t (*bench_run_fn)(void *arg);

/* One case of a set measured in turn (bench_measure_set). */
struct bench_item {
    const struct bench_case *c;
    bench_run_fn fn;
    void *arg;
    /* Optional, before every call of fn (warm-up too), outside the timed
     * region and the counters: e.g. switching paging on or off. */
    void (*before)(void *hook_arg);
    /* Optional, once after the last sample, before the record is written:
     * adds to a copy of *c the parameters only known by then (what the host
     * gave, read after the buffers were used). */
    void (*late_params)(struct bench_case *c, void *hook_arg);
    void *hook_arg; /* for both hooks */
    /* Optional: an item of the same set this one is measured against; its
     * key quantity is then the difference this - that, round by round
     * (workset multi - single, a switch minus its loop). runs=auto adds
     * rounds until every key quantity of the set is known to precision=:
     * these differences, and the median of each item no other item is
     * measured against and that has no `against` itself. */
    const struct bench_item *against;
};

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
int64_t bench_time_fibers(const struct fiber_spec *specs, uint32_t n, uint64_t *switches);

/* Announce how many cases this benchmark will report (for the progress bar). */
void bench_plan(struct bench_ctx *ctx, uint32_t cases);
/* `warmup` rounds, then `runs` rounds (runs=auto: CR_DEF_AUTO_MIN_RUNS,
 * then one more at a time until the set's key quantities are narrow enough
 * or budget= is spent); a round runs every item once, in order. Then one
 * result record per item, in order, each followed by a progress record. Where hardware counters are open (kernel/counters.h)
 * every recorded call of fn is bracketed by them as well as timed. */
void bench_measure_set(struct bench_ctx *ctx, const struct bench_item items[], uint32_t n);
/* One case on its own: bench_measure_set of one item. */
void bench_measure(struct bench_ctx *ctx, const struct bench_case *c, bench_run_fn fn, void *arg);
void bench_skip(struct bench_ctx *ctx, const char *case_name, const char *why);
/* The next case runs the user's code (a progress record names the case and
 * the code, WIRE_USER): a silence from here on is that code never
 * returning, and the host says so by name. */
void bench_running_user(struct bench_ctx *ctx, const char *case_name, const char *user);
/* The repetitions a benchmark should use: reps= if given, else its default. */
uint32_t bench_reps(const struct bench_ctx *ctx, uint32_t fallback);

#endif
