#include "bench/stats.h"

/* Heap sort: no recursion, no extra memory, O(n log n) for raw=1 runs of
 * many samples. */
static void sift_down(uint64_t *a, uint32_t root, uint32_t n)
{
    for (;;) {
        uint32_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void sort_u64(uint64_t *a, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (uint32_t end = n; end > 1; end--) {
        uint64_t t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        sift_down(a, 0, end - 1);
    }
}

void stats_compute(uint64_t *samples, uint32_t n, struct stats *out)
{
    *out = (struct stats){ .n = n };
    if (n == 0)
        return;
    sort_u64(samples, n);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += samples[i];
    out->min = samples[0];
    out->max = samples[n - 1];
    out->med = samples[(n - 1) / 2];
    out->mean = sum / n;
}
