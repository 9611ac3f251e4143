/* Timing with the time stamp counter. The serialisation around a timed
 * region is chosen from the CPU at boot: rdtscp where it exists, else
 * lfence (SSE2), else cpuid (Pentium-class); on AMD lfence counts only
 * where it is known to be dispatch-serialising (else cpuid). tsc_begin()/
 * tsc_end() bracket a region; their own cost (an empty region) is measured
 * once and reported, and benchmarks may subtract it.
 *
 * The TSC's frequency comes from every source the machine has: the HPET,
 * the ACPI PM timer and the PIT, each measured against the TSC over short
 * windows (the median of three), and CPUID leaves 15h (crystal x ratio) and
 * 16h (nominal base MHz). The figure the closest-agreeing pair of independent
 * sources supports (within TSC_AGREE_PPM) is chosen (lib/clockpick.h); a
 * figure nothing confirms is flagged, and with no source at all hz is 0,
 * never a guess. */
#ifndef ARCH_TSC_H
#define ARCH_TSC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86.h"

enum tsc_serialize { TSC_SER_NONE, TSC_SER_CPUID, TSC_SER_LFENCE, TSC_SER_RDTSCP };

/* The frequency sources, in the order of the `tsc=` key's values
 * (lib/config.c) and, after AUTO, of preference. */
enum tsc_source { TSC_SRC_AUTO, TSC_SRC_HPET, TSC_SRC_PMTIMER, TSC_SRC_PIT, TSC_SRC_CPUID15, TSC_SRC_CPUID16,
                  TSC_SRC_COUNT };

/* Two sources agree when their figures differ by at most this (0.5 %). */
#define TSC_AGREE_PPM 5000u

struct tsc_source_figure {
    const char *name;       /* as in the tsc record's "sources" */
    uint64_t hz;            /* the median of its windows; 0: absent or failed, see why */
    uint32_t spread_ppm;    /* max - min of its windows over the median (0: one figure, or declared) */
    const char *why;        /* why there is no figure */
};

struct tsc_info {
    uint64_t hz;            /* 0 if unknown */
    const char *method;     /* the chosen source's name, or "none" */
    enum tsc_serialize serialize;
    uint64_t overhead;      /* minimum cycles of an empty timed region */
    struct tsc_source_figure sources[TSC_SRC_COUNT]; /* [TSC_SRC_AUTO] unused */
    bool agree;             /* another independent source confirms hz within TSC_AGREE_PPM */
    const char *pair[2];    /* the two independent sources that agree best (0: fewer than two figures) */
    uint32_t pair_ppm;      /* how far apart they are */
    uint32_t tolerance_ppm; /* a source further than this from hz disagrees (tighter when the pair is close) */
    bool forced;            /* `tsc=` named the source */
    bool invariant;         /* CPUID 8000_0007h EDX bit 8: constant rate through P- and C-states */
    const char *lfence;     /* "architectural", "msr", "os", "unverified", "n/a" */
    uint64_t cost;          /* TSC ticks the calibration took (a stall shows here) */
};

extern enum tsc_serialize tsc_mode;

/* Whether two figures agree within TSC_AGREE_PPM of the first. */
bool tsc_figures_agree(uint64_t a, uint64_t b);
/* `tsc=` (a TSC_SRC_*): the source to use instead of the automatic choice.
 * Call before tsc_init. */
void tsc_force(uint32_t source);
/* False when the CPU has no TSC: nothing can be timed. */
bool tsc_init(void);
const struct tsc_info *tsc_info(void);
const char *tsc_serialize_name(enum tsc_serialize s);
/* Minimum of `samples` empty timed regions. */
uint64_t tsc_empty_region(uint32_t samples);

static inline uint64_t tsc_begin(void)
{
    uint64_t t;
    switch (tsc_mode) {
    case TSC_SER_RDTSCP:
    case TSC_SER_LFENCE:
        lfence();
        t = rdtsc();
        lfence();
        return t;
    case TSC_SER_CPUID:
        cpuid_serialize();
        return rdtsc();
    default:
        return rdtsc();
    }
}

static inline uint64_t tsc_end(void)
{
    uint64_t t;
    switch (tsc_mode) {
    case TSC_SER_RDTSCP:
        t = rdtscp(0);
        lfence();
        return t;
    case TSC_SER_LFENCE:
        lfence();
        t = rdtsc();
        lfence();
        return t;
    case TSC_SER_CPUID:
        cpuid_serialize();
        return rdtsc();
    default:
        return rdtsc();
    }
}

#endif
