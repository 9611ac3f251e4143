#include "lib/clockpick.h"

/* Where two measured sources agree this well, a third further off than
 * TIGHT_FACTOR times their difference (but at least TIGHT_FLOOR_PPM) is
 * named as disagreeing, even inside the looser agree_ppm. */
#define TIGHT_FACTOR 4u
#define TIGHT_FLOOR_PPM 100u

uint32_t clock_ppm(uint64_t a, uint64_t b)
{
    uint64_t diff = a > b ? a - b : b - a;
    if (a == 0)
        return UINT32_MAX;
    if (diff > UINT64_MAX / 1000000)
        return UINT32_MAX;
    uint64_t ppm = diff * 1000000 / a;
    return ppm > UINT32_MAX ? UINT32_MAX : (uint32_t)ppm;
}

uint64_t clock_median(const uint64_t *windows, uint32_t n, uint32_t *spread_ppm)
{
    uint64_t v[CLOCK_MAX_WINDOWS];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n && i < CLOCK_MAX_WINDOWS; i++)
        if (windows[i])
            v[k++] = windows[i];
    *spread_ppm = 0;
    if (k * 2 <= n)
        return 0;
    for (uint32_t i = 1; i < k; i++) /* insertion sort: a handful of figures */
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    uint64_t median = k % 2 ? v[k / 2] : v[k / 2 - 1] / 2 + v[k / 2] / 2 + (v[k / 2 - 1] % 2 + v[k / 2] % 2) / 2;
    *spread_ppm = clock_ppm(median, median + (v[k - 1] - v[0]));
    return median;
}

struct clock_choice clock_choose(const struct clock_source *s, uint32_t n, int forced, uint32_t agree_ppm)
{
    struct clock_choice c = { -1, { -1, -1 }, UINT32_MAX, false, agree_ppm };
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++) {
            if (!s[a].hz || !s[b].hz || s[a].group == s[b].group)
                continue;
            uint32_t ppm = clock_ppm(s[a].hz, s[b].hz);
            if (ppm < c.pair_ppm) { /* ties keep the earlier, more preferred pair */
                c.pair_ppm = ppm;
                c.pair[0] = (int)a;
                c.pair[1] = (int)b;
            }
        }
    c.agree = c.pair[0] >= 0 && c.pair_ppm <= agree_ppm;
    if (c.agree) {
        uint32_t tight = c.pair_ppm * TIGHT_FACTOR;
        c.tolerance_ppm = tight < TIGHT_FLOOR_PPM ? TIGHT_FLOOR_PPM : tight > agree_ppm ? agree_ppm : tight;
    }
    if (forced >= 0) {
        if ((uint32_t)forced < n && s[forced].hz)
            c.chosen = forced;
    } else if (c.agree) {
        /* the most preferred source the pair confirms within the (tight)
         * tolerance: the pair's own or a finer-grained one close to it */
        for (uint32_t i = 0; i < n && c.chosen < 0; i++)
            if (s[i].hz && clock_ppm(s[c.pair[0]].hz, s[i].hz) <= c.tolerance_ppm)
                c.chosen = (int)i;
    } else {
        for (uint32_t i = 0; i < n && c.chosen < 0; i++) /* unconfirmed: the most preferred figure */
            if (s[i].hz)
                c.chosen = (int)i;
    }
    if (c.chosen >= 0 && (forced >= 0 || !c.agree)) {
        /* forced outside the pair, or unconfirmed: does any independent figure confirm it? */
        bool confirmed = false;
        for (uint32_t i = 0; i < n; i++)
            if ((int)i != c.chosen && s[i].hz && s[i].group != s[c.chosen].group &&
                clock_ppm(s[c.chosen].hz, s[i].hz) <= agree_ppm)
                confirmed = true;
        c.agree = confirmed;
    }
    return c;
}
