#include "arch/pit.h"

#include "arch/x86.h"

#define PIT_CH2_DATA 0x42
#define PIT_COMMAND 0x43
#define PORT_B 0x61
#define PORT_B_GATE2 0x01
#define PORT_B_SPEAKER 0x02
#define PORT_B_OUT2 0x20

/* 54 ms of PIT ticks fit the 16-bit counter; no machine needs more than a
 * few million port reads for it, so 50 million is a broken PIT. */
#define POLL_LIMIT 50000000u

const char *pit_method(void) { return "pit"; }

bool pit_tsc_ticks(uint32_t ms, uint64_t *ticks)
{
    if (ms == 0 || ms > 54)
        return false;
    uint32_t count = PIT_HZ * ms / 1000;
    uint8_t b = inb(PORT_B);
    outb(PORT_B, (uint8_t)((b & ~PORT_B_SPEAKER) & ~PORT_B_GATE2)); /* gate low: hold */
    outb(PIT_COMMAND, 0xb0); /* channel 2, lo/hi byte, mode 0 (OUT rises at terminal count) */
    outb(PIT_CH2_DATA, (uint8_t)count);
    outb(PIT_CH2_DATA, (uint8_t)(count >> 8));
    b = inb(PORT_B);
    outb(PORT_B, (uint8_t)(b | PORT_B_GATE2)); /* gate high: count */
    uint64_t start = rdtsc();
    uint32_t polls = 0;
    while (!(inb(PORT_B) & PORT_B_OUT2)) {
        if (++polls == POLL_LIMIT) {
            outb(PORT_B, (uint8_t)(inb(PORT_B) & ~PORT_B_GATE2));
            return false;
        }
    }
    *ticks = rdtsc() - start;
    outb(PORT_B, (uint8_t)(inb(PORT_B) & ~PORT_B_GATE2));
    return true;
}
