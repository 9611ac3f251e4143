/* Integer statistics of cycle samples, computed in one place. Floating
 * point and derived figures are the host's job.
 *
 * Samples are signed: a sample is often a difference (a run minus its
 * baseline, minus the timing overhead), and a difference inside the noise
 * can come out negative. It is kept as measured, never clamped to 0, so
 * the host can say it is noise instead of printing a measured zero. */
#ifndef LIB_STATS_H
#define LIB_STATS_H

#include <stdbool.h>
#include <stdint.h>

struct stats {
    uint32_t n;
    int64_t min, med, max, mean; /* med: lower median; mean: rounded toward zero */
};

/* A distribution-free interval of the median of n values: the order
 * statistics [x(k), x(n+1-k)] cover the true median with probability
 * 1 - 2 P(Binomial(n, 1/2) < k) for independent values (the sign-test
 * interval when the values are per-round differences). */
struct stats_interval {
    int64_t lo, med, hi; /* med: lower median */
};

/* The values of n for which stats_rank95 has a rank; more use its last. */
#define STATS_RANKS 64

/* The largest k whose interval still covers with at least 95 %; 1 (the
 * whole range) where even that falls short (n <= 5: 5 runs cover 93.8 %).
 * The host computes the same exactly (tools/cleanroom_host/ranks.py). */
uint32_t stats_rank95(uint32_t n);
/* Sorts values in place and gives their median's 95 % interval. n > 0. */
void stats_median_interval(int64_t *values, uint32_t n, struct stats_interval *out);
/* Whether an interval is narrow enough: its width at most precision_bp
 * basis points of ref (a magnitude), or at most one tick (the samples'
 * resolution). Overflow-free for any width and ref. */
bool stats_within(const struct stats_interval *iv, uint64_t ref, uint32_t precision_bp);

/* Sorts samples in place (ascending) and summarises them. n may be 0. */
void stats_compute(int64_t *samples, uint32_t n, struct stats *out);
/* A sample per operation: sample / per, rounded toward zero (as C's integer
 * division), so -7 / 2 = -3 mirrors 7 / 2 = 3 and a noise sample keeps its
 * sign. per 0 or 1: the sample itself. */
int64_t stats_per(int64_t sample, uint64_t per);

#endif
