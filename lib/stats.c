#include "lib/stats.h"

/* Heap sort: no recursion, no extra memory, O(n log n) for raw=1 runs of
 * many samples. */
static void sift_down(int64_t *a, uint32_t root, uint32_t n)
{
    for (;;) {
        uint32_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        int64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void sort_i64(int64_t *a, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (uint32_t end = n; end > 1; end--) {
        int64_t t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        sift_down(a, 0, end - 1);
    }
}

int64_t stats_per(int64_t sample, uint64_t per)
{
    if (per <= 1)
        return sample;
    /* on the magnitude, so the rounding is toward zero by construction */
    uint64_t mag = sample < 0 ? -(uint64_t)sample : (uint64_t)sample;
    uint64_t q = mag / per;
    return sample < 0 ? -(int64_t)q : (int64_t)q;
}

/* The mean, rounded toward zero, without a sum that could overflow: on the
 * distances from the minimum (unsigned, each below 2^64), whose quotients
 * by n and remainders are added separately (each remainder is below n, so
 * their sum stays far from the limit). Unsigned arithmetic only: the
 * kernel has no signed 64-bit division helper beyond lib/freestanding/div64.c's. */
static int64_t mean_of(const int64_t *a, uint32_t n)
{
    uint64_t q = 0, r = 0, base = (uint64_t)a[0];
    for (uint32_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)a[i] - base; /* a[0] is the minimum: sorted */
        q += u / n;
        r += u % n;
    }
    q += r / n;
    r %= n;
    int64_t floor = (int64_t)(base + q); /* between the minimum and the maximum */
    /* floor of a negative mean with a fraction: one step up is toward zero */
    return floor < 0 && r != 0 ? floor + 1 : floor;
}

void stats_compute(int64_t *samples, uint32_t n, struct stats *out)
{
    *out = (struct stats){ .n = n };
    if (n == 0)
        return;
    sort_i64(samples, n);
    out->min = samples[0];
    out->max = samples[n - 1];
    out->med = samples[(n - 1) / 2];
    out->mean = mean_of(samples, n);
}

/* k for n = 1..STATS_RANKS: the largest k with 1 - 2 P(Bin(n, 1/2) < k) >= 0.95,
 * else 1. tests/test_units.py checks it against ranks.sign_rank. */
static const uint8_t rank95[STATS_RANKS] = {
    1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8, 8, 9, 9, 10, 10, 10,
    11, 11, 12, 12, 13, 13, 13, 14, 14, 15, 15, 16, 16, 16, 17, 17, 18, 18, 19, 19, 19, 20, 20, 21, 21,
    22, 22, 22, 23, 23, 24, 24,
};

uint32_t stats_rank95(uint32_t n)
{
    if (n == 0)
        return 1;
    return rank95[(n <= STATS_RANKS ? n : STATS_RANKS) - 1];
}

void stats_median_interval(int64_t *values, uint32_t n, struct stats_interval *out)
{
    sort_i64(values, n);
    uint32_t k = stats_rank95(n);
    *out = (struct stats_interval){ values[k - 1], values[(n - 1) / 2], values[n - k] };
}

bool stats_within(const struct stats_interval *iv, uint64_t ref, uint32_t precision_bp)
{
    uint64_t width = (uint64_t)iv->hi - (uint64_t)iv->lo; /* hi >= lo: exact in unsigned */
    /* ref * p / 10000 without the product: p <= 10000 keeps both terms in range */
    uint64_t limit = ref / 10000 * precision_bp + ref % 10000 * precision_bp / 10000;
    return width <= 1 || width <= limit;
}
