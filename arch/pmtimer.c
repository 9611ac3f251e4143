#include "arch/pmtimer.h"

#include "arch/acpi.h"
#include "arch/x86.h"

static uint16_t port;
static const volatile uint32_t *reg;

static uint32_t pmtimer_read_port(void) { return inl(port); }
/* X_PM_TMR_BLK in memory space: physical, read while paging is off (the
 * calibration runs before paging_init), so through the identity. */
static uint32_t pmtimer_read_mem(void) { return *reg; }

bool pmtimer_timebase(struct timebase *tb, const char **why)
{
    const struct acpi_tables *a = acpi_tables();
    if (!a->pm_timer_port && !a->pm_timer_mem) {
        *why = a->pm_timer_why;
        return false;
    }
    port = (uint16_t)a->pm_timer_port;
    reg = (const volatile uint32_t *)(uintptr_t)a->pm_timer_mem;
    uint32_t mask = a->pm_timer_bits == 32 ? 0xffffffffu : 0xffffffu;
    *tb = (struct timebase){ 1000000000000000ull / PMTIMER_HZ, mask, port ? pmtimer_read_port : pmtimer_read_mem, 0 };
    return true;
}
