/* A counter of known rate to measure the TSC against: the PIT, the PM timer,
 * the HPET (the hosted build: a clock of the host OS). Each describes itself
 * in one (arch/pit.h, arch/pmtimer.h, arch/hpet.h) and arch/tsc.c measures
 * against it: a header of its own, below both. */
#ifndef ARCH_TIMEBASE_H
#define ARCH_TIMEBASE_H

#include <stdint.h>

struct timebase {
    uint64_t period_fs;     /* femtoseconds per count */
    uint32_t mask;          /* the counter's width: it wraps at mask + 1 */
    uint32_t (*read)(void); /* the count, increasing */
    void (*release)(void);  /* undoes what the set-up changed; 0 if nothing */
};

#endif
