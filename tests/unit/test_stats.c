#include "bench/stats.h"
#include "unit.h"

int main(void)
{
    struct stats s;
    uint64_t one[] = { 42 };
    stats_compute(one, 1, &s);
    CHECK(s.n == 1 && s.min == 42 && s.med == 42 && s.max == 42 && s.mean == 42);

    uint64_t even[] = { 4, 1, 3, 2 };
    stats_compute(even, 4, &s);
    CHECK(s.min == 1 && s.med == 2 && s.max == 4 && s.mean == 2); /* lower median, mean rounded down */
    CHECK(even[0] == 1 && even[1] == 2 && even[2] == 3 && even[3] == 4);

    stats_compute(0, 0, &s);
    CHECK(s.n == 0 && s.min == 0 && s.max == 0);

    /* large values do not overflow the mean of a few samples */
    uint64_t big[] = { 1ull << 62, 1ull << 62, 0 };
    stats_compute(big, 3, &s);
    CHECK(s.max == 1ull << 62 && s.med == 1ull << 62 && s.mean == (1ull << 63) / 3);

    /* many samples, reverse order, with duplicates: sorted and right */
    static uint64_t many[100001];
    for (int i = 0; i < 100001; i++)
        many[i] = (uint64_t)(100000 - i) / 2;
    stats_compute(many, 100001, &s);
    int sorted = 1;
    for (int i = 1; i < 100001; i++)
        sorted &= many[i - 1] <= many[i];
    CHECK(sorted);
    CHECK(s.min == 0 && s.max == 50000 && s.med == 25000);
    return unit_finish();
}
