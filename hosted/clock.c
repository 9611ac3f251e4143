/* The TSC's time bases in a process: CLOCK_MONOTONIC_RAW (not slewed by
 * NTP) in place of the PIT the kernel reads; no ACPI timers, which a
 * process cannot reach; and the lfence set-up, which is the host kernel's
 * business. */
#define _GNU_SOURCE
#include <time.h>

#include "arch/acpi.h"
#include "arch/hpet.h"
#include "arch/lfence.h"
#include "arch/pit.h"
#include "arch/pmtimer.h"

static const char no_acpi[] = "a process cannot reach the ACPI timers";

const char *pit_method(void) { return "clock_monotonic_raw"; }

/* Nanoseconds, low 32 bits: the measurement handles the wrap (every 4.3 s). */
static uint32_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

bool pit_timebase(struct timebase *tb, const char **why)
{
    (void)why;
    *tb = (struct timebase){ 1000000, 0xffffffffu, now_ns, 0 };
    return true;
}

bool pmtimer_timebase(struct timebase *tb, const char **why)
{
    (void)tb;
    *why = no_acpi;
    return false;
}

bool hpet_timebase(struct timebase *tb, const char **why)
{
    (void)tb;
    *why = no_acpi;
    return false;
}

const struct acpi_tables *acpi_tables(void)
{
    static const struct acpi_tables none = { .why = no_acpi };
    return &none;
}

/* Linux sets AMD's DE_CFG lfence bit itself at boot (since 4.15) on the
 * families that need it; a process can neither write nor read the MSR. */
const char *lfence_make_serialising(void) { return "os"; }
