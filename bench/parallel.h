/* k workers at once, worker w on CPU w (worker 0 is the calling CPU, the
 * boot CPU in the kernel): the shape every multi-CPU benchmark is written
 * in, on top of kernel/smp.h's "run this on CPU k". The workers wait at a
 * start line until all are there; the caller's TSC times from the start to
 * the last worker's finish (one clock: no cross-CPU TSC comparison). */
#ifndef BENCH_PARALLEL_H
#define BENCH_PARALLEL_H

#include <stdint.h>

typedef void (*parallel_fn)(uint32_t worker, void *arg);

/* TSC ticks from the start to the last finish; k from 1 to smp_cpus(). */
int64_t parallel_run(uint32_t k, parallel_fn fn, void *arg);
/* Why k workers cannot run here (NULL: they can), for a skip record. */
const char *parallel_unavailable(uint32_t k);

#endif
