/* Timing with the time stamp counter. The serialisation around a timed
 * region is chosen from the CPU at boot: rdtscp where it exists, else
 * lfence (SSE2), else cpuid (Pentium-class). tsc_begin()/tsc_end() bracket
 * a region; their own cost (an empty region) is measured once and
 * reported, and benchmarks may subtract it. */
#ifndef ARCH_TSC_H
#define ARCH_TSC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86.h"

enum tsc_serialize { TSC_SER_NONE, TSC_SER_CPUID, TSC_SER_LFENCE, TSC_SER_RDTSCP };

struct tsc_info {
    uint64_t hz;            /* 0 if unknown */
    const char *method;     /* "cpuid15", "cpuid16", "pit", "none" */
    enum tsc_serialize serialize;
    uint64_t overhead;      /* minimum cycles of an empty timed region */
};

extern enum tsc_serialize tsc_mode;

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
