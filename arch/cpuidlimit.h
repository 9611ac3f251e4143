/* "Limit CPUID Maxval": some firmware leaves IA32_MISC_ENABLE bit 22 set
 * (for operating systems of the 1990s), which caps CPUID's basic leaves at
 * 2 or 3: no leaf-4 caches, no leaf 6 (APERF/MPERF), no leaves 15h/16h (the
 * TSC's rate). Linux clears it at boot; so does the kernel, on Intel CPUs,
 * through the safe MSR accessors, before the CPU is identified. The hosted
 * build cannot (a process reads no MSRs). */
#ifndef ARCH_CPUIDLIMIT_H
#define ARCH_CPUIDLIMIT_H

#include <stdbool.h>

/* Reads the bit and clears it where it is set. With set_first (provoke=
 * cpuidlimit), sets it before, so the clearing can be tested on CPUs and
 * emulators whose firmware leaves it clear. */
void cpuidlimit_lift(bool set_first);
/* "clear" (the bit was not set), "cleared" (set, and cleared: every leaf is
 * back), "stuck" (set, and the write was refused), "unreadable" (rdmsr
 * raised #GP), "n/a" (not an Intel CPU with MSRs), "hosted". */
const char *cpuidlimit_state(void);

#endif
