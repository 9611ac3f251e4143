/* The ACPI power-management timer: a free-running 24- or 32-bit counter at
 * 3.579545 MHz in an I/O port the FADT names (or, X_PM_TMR_BLK in memory
 * space, a register at a physical address). */
#ifndef ARCH_PMTIMER_H
#define ARCH_PMTIMER_H

#include <stdbool.h>

#include "arch/timebase.h"

#define PMTIMER_HZ 3579545u

/* Describes the PM timer as a time base; false, with why, when the ACPI
 * tables name none. */
bool pmtimer_timebase(struct timebase *tb, const char **why);

#endif
