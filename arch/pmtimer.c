#include "arch/pmtimer.h"

#include "arch/acpi.h"
#include "arch/x86.h"

static uint16_t port;

static uint32_t pmtimer_read(void) { return inl(port); }

bool pmtimer_timebase(struct timebase *tb, const char **why)
{
    const struct acpi_tables *a = acpi_tables();
    if (!a->pm_timer_port) {
        *why = a->rsdp ? (a->why ? a->why : "the FADT names no PM timer") : "no ACPI tables found";
        return false;
    }
    port = (uint16_t)a->pm_timer_port;
    uint32_t mask = a->pm_timer_bits == 32 ? 0xffffffffu : 0xffffffu;
    *tb = (struct timebase){ 1000000000000000ull / PMTIMER_HZ, mask, pmtimer_read, 0 };
    return true;
}
