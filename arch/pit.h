/* The 8254 PIT's channel 2 (no interrupts: its count is read back), as a
 * known-frequency time base to calibrate the TSC against. */
#ifndef ARCH_PIT_H
#define ARCH_PIT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/timebase.h"

#define PIT_HZ 1193182u

/* Starts channel 2 counting and describes it as a time base. False, with
 * why, where there is nothing to set up (the hosted build never fails). A
 * PIT that is absent or does not count is found by the measurement, which
 * sees the count not change. */
bool pit_timebase(struct timebase *tb, const char **why);
/* The name of this time base in the tsc record ("pit"; the hosted build
 * substitutes a clock of the host OS). */
const char *pit_method(void);

#endif
