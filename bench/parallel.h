/* k workers at once, worker w on CPU w (worker 0 is the calling CPU, the
 * boot CPU in the kernel): the shape every multi-CPU benchmark is written
 * in, on top of kernel/smp.h's "run this on CPU k". The workers wait at a
 * start line until all are there; the caller's TSC times from the start to
 * the last worker's finish (one clock: no cross-CPU TSC comparison). */
#ifndef BENCH_PARALLEL_H
#define BENCH_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/harness.h"
#include "arch/x86.h"

typedef void (*parallel_fn)(uint32_t worker, void *arg);

/* TSC ticks from the start to the last finish; k from 1 to smp_cpus().
 * Every worker reaches the start line, or the run ends: a worker that does
 * not within PARALLEL_START_LINE_S seconds (or whose CPU cannot take the
 * work) is named in an `error` record (`start_line`), the others are let
 * go and waited for, and the run ends with status fail; no sample is ever
 * taken with fewer workers than it says. */
int64_t parallel_run(uint32_t k, parallel_fn fn, void *arg);
/* The same on the CPUs listed (worker i on CPU cpus[i], each at most once):
 * the caller (CPU 0) works as worker 0 when cpus[0] is 0, else it only
 * starts and waits, and the CPUs not listed stay idle (hosted: asleep). */
int64_t parallel_run_on(const uint32_t *cpus, uint32_t k, parallel_fn fn, void *arg);
#define PARALLEL_START_LINE_S 10u
/* Some of k workers (worker w on CPU cpus[w]) never reached a start line
 * within PARALLEL_START_LINE_S (missing[w]): a `start_line` error names
 * their CPUs, *go lets the others run, every posted one (posted[w]) is
 * waited for (a faulted or silent CPU is named by smp_wait_within) and the
 * run ends: nothing is measured with fewer workers than its record says.
 * parallel_run_on's own start line, and linuxvm's forked workers'. */
__attribute__((noreturn)) void parallel_start_line_short(const uint32_t *cpus, uint32_t k, const bool *missing,
                                                         const bool *posted, volatile uint32_t *go);
/* How many workers of the last parallel_run the OS took off their CPU
 * between the start line and their finish for over 1/PARALLEL_DISTURBED_PART
 * of that time (smp_thread_times: hosted only; always 0 in the kernel).
 * Such a sample timed the scheduler too. A shorter preemption (a kernel
 * worker's few microseconds in a 50 ms sample) moves the sample by less
 * than its run-to-run noise: retrying every one re-ran each long sample up
 * to 20 times (a 2-vCPU guest, falseshare object@24 at 10 x reps: 76
 * retries in 4 samples). */
#define PARALLEL_DISTURBED_PART 100u
uint32_t parallel_disturbed(void);

/* One sample the OS did not disturb, where it can be had: once(arg) (which
 * sets its state up and calls parallel_run once) is run again while a
 * worker was switched out, PARALLEL_TRIES times in all at most (once where
 * workers share CPUs: oversubscribe=1); the last run's ticks. *tally counts the runs thrown away and the samples kept
 * although disturbed (every try was), for the record's params. */
#define PARALLEL_TRIES 20u
struct parallel_tally {
    uint32_t retried;   /* runs re-done because a worker was switched out */
    uint32_t disturbed; /* samples kept disturbed after PARALLEL_TRIES */
};
int64_t parallel_undisturbed(bench_run_fn once, void *arg, struct parallel_tally *tally);
/* Adds "retried" and "disturbed" to a case's params (0 and 0 in the
 * kernel, where nothing preempts). */
void parallel_tally_params(struct bench_case *c, const struct parallel_tally *tally);
/* A k sweep's case says which CPUs its workers ran on: params.cpu_ids (the
 * platform ids of CPUs 0 .. k-1, as "0-3,8") and params.smt (1 when two of
 * them are hardware threads of one core, 0 when none are, absent where the
 * cores are not known: smp record `cores`). */
void parallel_sweep_params(struct bench_case *c, uint32_t k);
/* Why k workers cannot run here (NULL: they can), for a skip record. */
const char *parallel_unavailable(uint32_t k);
/* A multi-CPU benchmark's `unavailable` hook (bench/registry.h): NULL from
 * two CPUs up, else parallel_unavailable(2)'s reason. */
const char *parallel_needs_two(const struct config *cfg);
/* The TSC reading after which a worker waiting for another CPU (a
 * ping-pong, a barrier) gives up: a CPU that faulted must not keep the boot
 * CPU spinning before smp_wait can name it. About PARALLEL_PATIENCE_S
 * seconds from now. */
uint64_t parallel_deadline(void);
#define PARALLEL_PATIENCE_S 60u

/* The worker counts a benchmark sweeps: k = 1, 2, 4, ... below the run's
 * CPUs, and all of them. Returns how many (at most PARALLEL_COUNTS_MAX). */
#define PARALLEL_COUNTS_MAX 8
uint32_t parallel_counts(uint32_t ks[PARALLEL_COUNTS_MAX]);
/* Every other CPU runs nothing once, and so takes on the caller's paging
 * state (kernel/smp.h): a benchmark that gave the CPUs directories of its
 * own calls it before that memory goes back. */
void parallel_settle(void);

/* A sample's time limit, on each worker's own TSC. Where CPUs are host
 * threads (QEMU's vCPUs on fewer host cores) a FIFO lock hands over once per
 * host time slice and a fixed count of operations could take minutes: each
 * worker stops at its count or at the limit, whichever comes first, and the
 * sample is scaled to the planned count (parallel_scaled). */
#define PARALLEL_SAMPLE_MS 50 /* the usual limit: ample for real CPUs, short where vCPUs crawl */
struct parallel_budget {
    uint64_t t0, ticks;
};
void parallel_budget_start(struct parallel_budget *b, uint32_t ms);
/* Checked every 16th operation i, so the clock costs little. */
static inline bool parallel_budget_left(const struct parallel_budget *b, uint32_t i)
{
    return (i & 15) || rdtsc() - b->t0 < b->ticks;
}
/* ticks for `done` operations, as ticks for `planned` (done == planned: as is). */
int64_t parallel_scaled(int64_t ticks, uint64_t planned, uint64_t done);

#endif
