#include "arch/hpet.h"

#include "arch/acpi.h"

#define HPET_CAPABILITIES 0x000    /* bits 63:32: counter period in femtoseconds */
#define HPET_CONFIG 0x010
#define HPET_CONFIG_ENABLE 0x1u
#define HPET_MAIN_COUNTER 0x0f0
/* The specification's bound: a period over 100 ns (under 10 MHz) is not an HPET. */
#define HPET_MAX_PERIOD_FS 100000000u

static volatile uint32_t *regs;
static bool enabled_by_us;

static uint32_t reg(uint32_t offset) { return regs[offset / 4]; }

static uint32_t hpet_read(void) { return reg(HPET_MAIN_COUNTER); }

static void hpet_release(void)
{
    if (enabled_by_us)
        regs[HPET_CONFIG / 4] = reg(HPET_CONFIG) & ~HPET_CONFIG_ENABLE;
    enabled_by_us = false;
}

bool hpet_timebase(struct timebase *tb, const char **why)
{
    const struct acpi_tables *a = acpi_tables();
    if (!a->hpet_base) {
        *why = a->hpet_why;
        return false;
    }
    if (a->hpet_base >= ((uint64_t)1 << 32) || (a->hpet_base & 7)) {
        *why = "the HPET table's base address is above 4 GiB or misaligned";
        return false;
    }
    regs = (volatile uint32_t *)(uintptr_t)a->hpet_base; /* physical: paging is off */
    uint32_t period = reg(HPET_CAPABILITIES + 4);
    if (period == 0 || period > HPET_MAX_PERIOD_FS) {
        *why = "the HPET's period is 0 or over 100 ns (no HPET at the table's address)";
        return false;
    }
    if (!(reg(HPET_CONFIG) & HPET_CONFIG_ENABLE)) {
        regs[HPET_CONFIG / 4] = reg(HPET_CONFIG) | HPET_CONFIG_ENABLE;
        enabled_by_us = true;
    }
    *tb = (struct timebase){ period, 0xffffffffu, hpet_read, hpet_release };
    return true;
}
