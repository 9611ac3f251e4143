/* The working-set sweep of Klimiankou 2018 (sizes and repetitions), for
 * every benchmark that runs it: bench workset (fibers) and bench aspace
 * (workset_threads), so their points pair up size by size. */
#ifndef BENCH_SWEEP_H
#define BENCH_SWEEP_H

#include <stdint.h>

#include "bench/harness.h"

#define SWEEP_MAX_SIZES 64

/* sizes= if given, else 0, then 2^k and 3*2^(k-1) bytes (1, 2, 3, 4, 6, 8,
 * 12, ...) up to maxsize. Returns the count; *sizes points at them. */
uint32_t sweep_sizes(const struct config *cfg, const uint64_t **sizes);
/* reps= if given; paper: a fixed count; quick: a fixed number of bytes
 * written per buffer per series, with at least a few refills (a buffer
 * refilled once or twice shows no reuse) and a cap for the smallest sizes;
 * the figures, the kernel's and the hosted build's, are in lib/defaults.h. */
uint32_t sweep_reps(const struct bench_ctx *ctx, uint64_t size);

#endif
