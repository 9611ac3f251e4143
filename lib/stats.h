/* Integer statistics of cycle samples, computed in one place. Floating
 * point and derived figures are the host's job.
 *
 * Samples are signed: a sample is often a difference (a run minus its
 * baseline, minus the timing overhead), and a difference inside the noise
 * can come out negative. It is kept as measured, never clamped to 0, so
 * the host can say it is noise instead of printing a measured zero. */
#ifndef LIB_STATS_H
#define LIB_STATS_H

#include <stdint.h>

struct stats {
    uint32_t n;
    int64_t min, med, max, mean; /* med: lower median; mean: rounded toward zero */
};

/* Sorts samples in place (ascending) and summarises them. n may be 0. */
void stats_compute(int64_t *samples, uint32_t n, struct stats *out);
/* A sample per operation: sample / per, rounded toward zero (as C's integer
 * division), so -7 / 2 = -3 mirrors 7 / 2 = 3 and a noise sample keeps its
 * sign. per 0 or 1: the sample itself. */
int64_t stats_per(int64_t sample, uint64_t per);

#endif
