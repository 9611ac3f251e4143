/* Choosing the TSC's rate from several clocks, each measured over a few
 * windows (arch/tsc.c): portable, so the unit tests run it on recorded
 * window figures (tests/unit/test_clockpick.c).
 *
 * A window can be hit by something the kernel cannot stop (an SMI of tens
 * to hundreds of microseconds on a PC with legacy USB emulation): one
 * window's figure may be off by 0.1-1 %. So each source's figure is the
 * median of its windows, and the figure chosen is the one the two
 * independent sources that agree best support, not the first source in an
 * order of preference that anything confirms within 0.5 %. */
#ifndef LIB_CLOCKPICK_H
#define LIB_CLOCKPICK_H

#include <stdbool.h>
#include <stdint.h>

#define CLOCK_MAX_WINDOWS 8
#define CLOCK_MAX_SOURCES 8

/* The median of the windows that gave a figure (0 is a failed window);
 * 0 unless more than half of them did. *spread_ppm: (max - min) / median
 * of those, in parts per million. */
uint64_t clock_median(const uint64_t *windows, uint32_t n, uint32_t *spread_ppm);

/* |a - b| relative to a, in parts per million (saturating). */
uint32_t clock_ppm(uint64_t a, uint64_t b);

struct clock_source {
    uint64_t hz;     /* 0: no figure */
    uint32_t group;  /* sources of one group cannot confirm each other (CPUID 15h and 16h) */
};

struct clock_choice {
    int chosen;          /* index of the source whose figure is taken, -1: none */
    int pair[2];         /* the closest-agreeing independent pair, -1 where there is none */
    uint32_t pair_ppm;   /* how far apart that pair is */
    bool agree;          /* the pair agrees within agree_ppm */
    uint32_t tolerance_ppm; /* beyond this from the chosen figure a source disagrees */
};

/* Sources in order of preference. The chosen figure: the most preferred
 * source within tolerance_ppm of the closest-agreeing independent pair
 * (usually a member of it); with no agreeing pair, the most preferred one,
 * unconfirmed. forced >= 0: that source, if it has a figure. */
struct clock_choice clock_choose(const struct clock_source *s, uint32_t n, int forced, uint32_t agree_ppm);

#endif
