/* The clock behind a 16550's divisor. ISA COM ports run from 1.8432 MHz
 * (115200 x 16) by design; a PCI or PCIe UART runs from whatever crystal
 * its card has, often 8x-16x faster, and the loopback test that proves a
 * UART exists passes at any clock. So a PCI UART's rate is only "known"
 * for cards in uart_models (their clock, and how many UARTs sit behind
 * the first I/O BAR at which stride), "set" when serial_clock= gives it,
 * and otherwise "unverified" (divisor 1, as if it were 1.8432 MHz).
 * Portable: unit-tested in tests/unit/test_uartclock.c. */
#ifndef LIB_UARTCLOCK_H
#define LIB_UARTCLOCK_H

#include <stdint.h>

#define UART_STANDARD_CLOCK 1843200u
/* A divisor whose rate is further than this from the one asked is refused
 * (a UART link tolerates a few percent between the two ends). */
#define UART_RATE_TOLERANCE_PCT 2u

struct uart_model {
    uint16_t vendor, device;
    uint32_t clock_hz;
    uint8_t ports;  /* UARTs behind the first I/O BAR, `stride` bytes apart; 0: one per I/O BAR */
    uint8_t stride;
    const char *name;
};

/* NULL for a card not in the table. */
const struct uart_model *uart_model_find(uint16_t vendor, uint16_t device);
/* The divisor for `baud` from a UART clocked at clock_hz (the 16x
 * oversampling included) and the rate it gives; 0 when none is within
 * UART_RATE_TOLERANCE_PCT or it does not fit 16 bits. */
uint32_t uart_divisor(uint32_t clock_hz, uint32_t baud, uint32_t *actual_baud);

#endif
