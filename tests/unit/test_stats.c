#include "lib/stats.h"
#include "unit.h"

int main(void)
{
    struct stats s;
    int64_t one[] = { 42 };
    stats_compute(one, 1, &s);
    CHECK(s.n == 1 && s.min == 42 && s.med == 42 && s.max == 42 && s.mean == 42);

    int64_t even[] = { 4, 1, 3, 2 };
    stats_compute(even, 4, &s);
    CHECK(s.min == 1 && s.med == 2 && s.max == 4 && s.mean == 2); /* lower median, mean toward zero */
    CHECK(even[0] == 1 && even[1] == 2 && even[2] == 3 && even[3] == 4);

    stats_compute(0, 0, &s);
    CHECK(s.n == 0 && s.min == 0 && s.max == 0);

    /* large values do not overflow the mean of a few samples */
    int64_t big[] = { 1ll << 62, 1ll << 62, 0 };
    stats_compute(big, 3, &s);
    CHECK(s.max == 1ll << 62 && s.med == 1ll << 62 && s.mean == (int64_t)((1ull << 63) / 3));
    int64_t huge[] = { INT64_MAX, INT64_MAX, INT64_MAX - 1 };
    stats_compute(huge, 3, &s);
    CHECK(s.mean == INT64_MAX - 1);
    int64_t low[] = { INT64_MIN, INT64_MIN, INT64_MIN + 2 };
    stats_compute(low, 3, &s);
    CHECK(s.min == INT64_MIN && s.mean == INT64_MIN + 1); /* -2^63 + 2/3, toward zero */

    /* negative samples: a difference inside the noise stays as measured */
    int64_t noise[] = { 5, -3, 0, -1117, 12 };
    stats_compute(noise, 5, &s);
    CHECK(s.min == -1117 && s.med == 0 && s.max == 12);
    CHECK(s.mean == -220); /* -1103 / 5 = -220.6, toward zero */
    CHECK(noise[0] == -1117 && noise[1] == -3 && noise[4] == 12);

    int64_t neg[] = { -7, -2, -9, -4 };
    stats_compute(neg, 4, &s);
    CHECK(s.min == -9 && s.med == -7 && s.max == -2 && s.mean == -5); /* lower median; -22/4 = -5.5 */

    /* a mean whose parts have opposite signs: quotients up, remainders down */
    int64_t mixed[] = { 7, -1 };
    stats_compute(mixed, 2, &s);
    CHECK(s.mean == 3);
    int64_t mixed2[] = { -7, 1 };
    stats_compute(mixed2, 2, &s);
    CHECK(s.mean == -3);
    int64_t cancel[] = { 3, -3, 1, -1 };
    stats_compute(cancel, 4, &s);
    CHECK(s.mean == 0 && s.med == -1);
    int64_t just_below[] = { 2, 2, -5 }; /* -1 / 3 */
    stats_compute(just_below, 3, &s);
    CHECK(s.mean == 0);

    /* per operation: rounded toward zero, the same for a sample and its mirror */
    CHECK(stats_per(7, 2) == 3 && stats_per(-7, 2) == -3);
    CHECK(stats_per(-1, 1000) == 0 && stats_per(1, 1000) == 0);
    CHECK(stats_per(-2000, 1000) == -2 && stats_per(-1999, 1000) == -1);
    CHECK(stats_per(-5, 0) == -5 && stats_per(-5, 1) == -5);
    CHECK(stats_per(INT64_MIN, 2) == INT64_MIN / 2 && stats_per(INT64_MIN, 1ull << 63) == -1);
    CHECK(stats_per(INT64_MAX, UINT64_MAX) == 0);

    /* many samples, reverse order, with duplicates, around zero: sorted and right */
    static int64_t many[100001];
    for (int i = 0; i < 100001; i++)
        many[i] = (int64_t)(100000 - i) / 2 - 25000;
    stats_compute(many, 100001, &s);
    int sorted = 1;
    for (int i = 1; i < 100001; i++)
        sorted &= many[i - 1] <= many[i];
    CHECK(sorted);
    CHECK(s.min == -25000 && s.max == 25000 && s.med == 0);

    /* the median's interval: whole range up to 8 values (n = 5: 93.8 %; 6-8: >= 96.9 %), then inward */
    CHECK(stats_rank95(1) == 1 && stats_rank95(5) == 1 && stats_rank95(8) == 1);
    CHECK(stats_rank95(9) == 2 && stats_rank95(11) == 2 && stats_rank95(12) == 3 && stats_rank95(64) == 24);
    CHECK(stats_rank95(1000) == stats_rank95(64) && stats_rank95(0) == 1);
    struct stats_interval iv;
    int64_t five[] = { 30, -2, 7, 1000, 9 };
    stats_median_interval(five, 5, &iv);
    CHECK(iv.lo == -2 && iv.med == 9 && iv.hi == 1000);
    int64_t nine[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5 }; /* k = 2: x(2)..x(8) */
    stats_median_interval(nine, 9, &iv);
    CHECK(iv.lo == 2 && iv.med == 5 && iv.hi == 8);
    int64_t twelve[] = { -100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1000 }; /* k = 3: outliers and more left out */
    stats_median_interval(twelve, 12, &iv);
    CHECK(iv.lo == 2 && iv.med == 5 && iv.hi == 9);

    /* narrow enough: width <= precision of ref, or one tick */
    struct stats_interval w = { 1000, 1010, 1020 };
    CHECK(stats_within(&w, 1000, 200) && !stats_within(&w, 1000, 199) && !stats_within(&w, 999, 200));
    struct stats_interval tick = { 8, 9, 9 };
    CHECK(stats_within(&tick, 9, 1) && !stats_within(&(struct stats_interval){ 7, 8, 9 }, 9, 1));
    struct stats_interval wide = { INT64_MIN, 0, INT64_MAX }; /* width 2^64 - 1: no overflow */
    CHECK(!stats_within(&wide, UINT64_MAX, 9999) && stats_within(&wide, UINT64_MAX, 10000));
    struct stats_interval none = { 5, 5, 5 };
    CHECK(stats_within(&none, 0, 1));
    return unit_finish();
}
