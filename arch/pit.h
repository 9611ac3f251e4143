/* The 8254 PIT's channel 2, polled through port 0x61 (no interrupts), as a
 * known-frequency time base to calibrate the TSC against. */
#ifndef ARCH_PIT_H
#define ARCH_PIT_H

#include <stdbool.h>
#include <stdint.h>

#define PIT_HZ 1193182u

/* Counts the TSC over `ms` milliseconds of PIT time (at most 54). Returns
 * false if the PIT never signalled the end (no PIT, or a broken one). */
bool pit_tsc_ticks(uint32_t ms, uint64_t *ticks);
/* The name of this time base in the tsc record ("pit"; the hosted build
 * substitutes a clock of the host OS). */
const char *pit_method(void);

#endif
