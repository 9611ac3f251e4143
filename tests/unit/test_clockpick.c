/* lib/clockpick.c on recorded window figures: the median drops a window an
 * SMI hit; the chosen figure is the one the closest-agreeing independent
 * pair supports, not the first preferred source confirmed within 0.5 %. */
#include "lib/clockpick.h"
#include "unit.h"

enum { HPET, PMTIMER, PIT, CPUID15, CPUID16, N };
#define AGREE 5000u /* arch/tsc.h's TSC_AGREE_PPM */

static struct clock_choice pick(uint64_t hpet, uint64_t pm, uint64_t pit, uint64_t c15, uint64_t c16, int forced)
{
    struct clock_source s[N] = { { hpet, HPET }, { pm, PMTIMER }, { pit, PIT }, { c15, CPUID15 }, { c16, CPUID15 } };
    return clock_choose(s, N, forced, AGREE);
}

int main(void)
{
    uint32_t spread;
    /* three windows of a 2.6 GHz TSC against the HPET; the second took a
     * 150 us SMI inside its 5 ms: +3 % in that window alone */
    uint64_t hpet_w[3] = { 2593583232u, 2671391000u, 2593584900u };
    uint64_t hpet = clock_median(hpet_w, 3, &spread);
    CHECK(hpet == 2593584900u);
    CHECK(spread > 29000 && spread < 31000); /* the spread says a window was hit */
    /* a failed window: the median of the two others (their mean, rounded down) */
    uint64_t one_failed[3] = { 2593583232u, 0, 2593584900u };
    CHECK(clock_median(one_failed, 3, &spread) == 2593584066u);
    /* two of three failed: no figure at all */
    uint64_t two_failed[3] = { 0, 2593583232u, 0 };
    CHECK(clock_median(two_failed, 3, &spread) == 0 && spread == 0);

    /* The case from the issue: an SMI at a window edge moved the HPET's
     * figure by 0.4 % (inside the 0.5 % that once let it be chosen as
     * "confirmed"), while the PM timer and the PIT agree to 0.01 %. */
    uint64_t pm = 2596114511u, pit = 2595964002u, hpet_smi = 2606500000u;
    struct clock_choice c = pick(hpet_smi, pm, pit, 0, 0, -1);
    CHECK(c.pair[0] == PMTIMER && c.pair[1] == PIT);
    CHECK(c.agree && c.chosen == PMTIMER);
    CHECK(c.pair_ppm == 57 && c.tolerance_ppm == 228); /* 4 x the pair's 57 ppm */
    CHECK(clock_ppm(pm, hpet_smi) > c.tolerance_ppm);   /* the HPET is named as disagreeing */

    /* All three close (QEMU under -icount): the finest-grained, most
     * preferred one, which the pair confirms within the tight tolerance. */
    c = pick(999999200u, 1000001000u, 1000001200u, 0, 0, -1);
    CHECK(c.pair[0] == PMTIMER && c.pair[1] == PIT && c.pair_ppm == 0);
    CHECK(c.agree && c.chosen == HPET && c.tolerance_ppm == 100);

    /* CPUID 15h and 16h come from the same fused values: they cannot be a
     * pair, but one of them confirms a measured figure. */
    c = pick(0, 0, 0, 2400000000u, 2400000000u, -1);
    CHECK(c.pair[0] == -1 && !c.agree && c.chosen == CPUID15);
    c = pick(0, 0, 2400100000u, 2400000000u, 2400000000u, -1);
    CHECK(c.pair[0] == PIT && c.pair[1] == CPUID15 && c.agree && c.chosen == PIT);

    /* Nothing agrees: the most preferred figure, unconfirmed. */
    c = pick(2000000000u, 2100000000u, 0, 0, 0, -1);
    CHECK(!c.agree && c.chosen == HPET && c.tolerance_ppm == AGREE);
    /* One source only: unconfirmed. None: no choice. */
    c = pick(0, 0, 1000000500u, 0, 0, -1);
    CHECK(!c.agree && c.chosen == PIT && c.pair[0] == -1);
    c = pick(0, 0, 0, 0, 0, -1);
    CHECK(c.chosen == -1 && !c.agree);

    /* tsc= names the source: taken as it is, confirmed if any independent
     * figure is within 0.5 % of it. */
    c = pick(hpet_smi, pm, pit, 0, 0, HPET);
    CHECK(c.chosen == HPET && c.agree);
    c = pick(3000000000u, pm, pit, 0, 0, HPET);
    CHECK(c.chosen == HPET && !c.agree);
    c = pick(0, pm, pit, 0, 0, HPET);
    CHECK(c.chosen == -1);
    return unit_finish();
}
