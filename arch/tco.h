/* The chipset's TCO watchdog (Intel ICH/PCH): a timer the firmware may
 * leave armed, which resets a machine that runs for minutes with interrupts
 * off (nothing reloads it). Read only, never touched: where it sits (the
 * LPC bridge's ACPI base + 0x60 on ICH-era chipsets and QEMU's q35; the
 * SMBus controller's TCOBASE on 100-series PCHs and later), whether its
 * timer is halted (TCO1_CNT.TCO_TMR_HLT), its timeout, and NO_REBOOT
 * (GCS bit 5 behind the LPC bridge's RCBA, ICH-era only). AMD chipsets and
 * non-Intel bridges: "absent". */
#ifndef ARCH_TCO_H
#define ARCH_TCO_H

#include <stdbool.h>
#include <stdint.h>

#define TCO_TICK_MS 600 /* TCO_TMR counts 0.6 s ticks */

struct tco_state {
    const char *where;      /* "lpc", "smbus", or 0 when there is none to read */
    uint32_t base;          /* the TCO registers' I/O port */
    bool halted;            /* TCO_TMR_HLT: the timer does not count */
    uint32_t timeout_ticks; /* TCO_TMR's initial value (0.6 s ticks) */
    int no_reboot;          /* 1: a timeout cannot reset (NO_REBOOT); 0: it can; -1: not readable here */
    const char *why;        /* why nothing was read */
};

/* Looks once (needs PCI configuration mechanism #1). */
const struct tco_state *tco_read(void);
/* True when the timer counts and may reset the machine. */
bool tco_may_reset(const struct tco_state *t);

#endif
