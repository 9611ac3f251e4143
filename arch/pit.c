#include "arch/pit.h"

#include "arch/x86.h"

#define PIT_CH2_DATA 0x42
#define PIT_COMMAND 0x43
#define PIT_CH2_MODE0_LOHI 0xb0  /* channel 2, lo/hi byte, mode 0, binary */
#define PIT_CH2_LATCH 0x80       /* channel 2, counter latch */
#define PORT_B 0x61
#define PORT_B_GATE2 0x01
#define PORT_B_SPEAKER 0x02

static uint8_t saved_port_b;

const char *pit_method(void) { return "pit"; }

/* Mode 0 counts down from 65536 and keeps wrapping; the time base wants a
 * count that rises. With no PIT (QEMU pit=off) every read is 0xff, so the
 * count never changes, which the measurement catches in a few thousand
 * reads. */
static uint32_t pit_read(void)
{
    outb(PIT_COMMAND, PIT_CH2_LATCH);
    uint32_t lo = inb(PIT_CH2_DATA);
    uint32_t hi = inb(PIT_CH2_DATA);
    return (0x10000u - (lo | hi << 8)) & 0xffffu;
}

static void pit_release(void) { outb(PORT_B, saved_port_b); }

bool pit_timebase(struct timebase *tb, const char **why)
{
    (void)why;
    saved_port_b = inb(PORT_B);
    outb(PORT_B, (uint8_t)(saved_port_b & ~(PORT_B_SPEAKER | PORT_B_GATE2))); /* hold, speaker silent */
    outb(PIT_COMMAND, PIT_CH2_MODE0_LOHI);
    outb(PIT_CH2_DATA, 0);
    outb(PIT_CH2_DATA, 0);
    outb(PORT_B, (uint8_t)((saved_port_b & ~PORT_B_SPEAKER) | PORT_B_GATE2)); /* gate high: count */
    *tb = (struct timebase){ 1000000000000000ull / PIT_HZ, 0xffffu, pit_read, pit_release };
    return true;
}
