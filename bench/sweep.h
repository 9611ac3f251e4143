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
/* reps= if given; paper: 100000; quick: about 4 MiB written per buffer per
 * series, at least 4 (a buffer refilled once or twice shows no reuse) and
 * at most 10000; the hosted build's quick: about 512 MiB, at least 16, at
 * most 200000 (bench/sweep.c). */
uint32_t sweep_reps(const struct bench_ctx *ctx, uint64_t size);

#endif
