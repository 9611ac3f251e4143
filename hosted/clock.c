/* The TSC's time base in a process: CLOCK_MONOTONIC_RAW (not slewed by
 * NTP), in place of the PIT the kernel polls. */
#define _GNU_SOURCE
#include <time.h>

#include "arch/pit.h"
#include "arch/x86.h"

const char *pit_method(void) { return "clock_monotonic_raw"; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool pit_tsc_ticks(uint32_t ms, uint64_t *ticks)
{
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    uint64_t t0 = rdtsc();
    while (now_ns() < end)
        ;
    *ticks = rdtsc() - t0;
    return true;
}
