/* Integer statistics of cycle samples, computed in one place. Floating
 * point and derived figures are the host's job. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdint.h>

struct stats {
    uint32_t n;
    uint64_t min, med, max, mean; /* med: lower median; mean: rounded down */
};

/* Sorts samples in place (ascending) and summarises them. n may be 0. */
void stats_compute(uint64_t *samples, uint32_t n, struct stats *out);

#endif
