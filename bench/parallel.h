/* k workers at once, worker w on CPU w (worker 0 is the calling CPU, the
 * boot CPU in the kernel): the shape every multi-CPU benchmark is written
 * in, on top of kernel/smp.h's "run this on CPU k". The workers wait at a
 * start line until all are there; the caller's TSC times from the start to
 * the last worker's finish (one clock: no cross-CPU TSC comparison). */
#ifndef BENCH_PARALLEL_H
#define BENCH_PARALLEL_H

#include <stdint.h>

#include "bench/harness.h"

typedef void (*parallel_fn)(uint32_t worker, void *arg);

/* TSC ticks from the start to the last finish; k from 1 to smp_cpus(). */
int64_t parallel_run(uint32_t k, parallel_fn fn, void *arg);
/* How many workers of the last parallel_run the OS took off their CPU
 * between the start line and their finish (smp_switched_out: hosted only;
 * always 0 in the kernel). Such a sample timed the scheduler too. */
uint32_t parallel_disturbed(void);

/* One sample the OS did not disturb, where it can be had: once(arg) (which
 * sets its state up and calls parallel_run once) is run again while a
 * worker was switched out, PARALLEL_TRIES times in all at most; the last
 * run's ticks. *tally counts the runs thrown away and the samples kept
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

#endif
