#include "lib/uartclock.h"

/* Sources: Linux drivers/tty/serial/8250/8250_pci.c (and 8250_exar.c),
 * whose board entries give each card's base baud (clock / 16) and port
 * layout: pbn_b0_N_115200 = N UARTs in BAR 0, 8 bytes apart, 1.8432 MHz;
 * pbn_b0_bt_N_115200 = one UART per BAR; pbn_b0_N_921600 = 14.7456 MHz.
 * Cards Linux matches only through the generic class entry (pbn_default,
 * 115200) are not listed: that entry is an assumption, not a fact about
 * the card, so they stay "unverified" here. */
static const struct uart_model models[] = {
    { 0x1b36, 0x0002, UART_STANDARD_CLOCK, 1, 8, "QEMU pci-serial" },
    { 0x1b36, 0x0003, UART_STANDARD_CLOCK, 2, 8, "QEMU pci-serial-2x" },
    { 0x1b36, 0x0004, UART_STANDARD_CLOCK, 4, 8, "QEMU pci-serial-4x" },
    { 0x9710, 0x9835, UART_STANDARD_CLOCK, 0, 0, "NetMos/MosChip 9835" },
    { 0x9710, 0x9845, UART_STANDARD_CLOCK, 0, 0, "NetMos/MosChip 9845" },
    { 0x9710, 0x9865, UART_STANDARD_CLOCK, 0, 0, "NetMos/MosChip 9865" },
    { 0x13a8, 0x0152, 8 * UART_STANDARD_CLOCK, 2, 8, "Exar XR17C152" },
    { 0x13a8, 0x0154, 8 * UART_STANDARD_CLOCK, 4, 8, "Exar XR17C154" },
    { 0x13a8, 0x0158, 8 * UART_STANDARD_CLOCK, 8, 8, "Exar XR17C158" },
};

const struct uart_model *uart_model_find(uint16_t vendor, uint16_t device)
{
    for (uint32_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (models[i].vendor == vendor && models[i].device == device)
            return &models[i];
    return 0;
}

uint32_t uart_divisor(uint32_t clock_hz, uint32_t baud, uint32_t *actual_baud)
{
    *actual_baud = 0;
    if (!clock_hz || !baud)
        return 0;
    uint64_t per = (uint64_t)baud * 16;
    uint64_t d = (clock_hz + per / 2) / per; /* nearest */
    if (d == 0 || d > 0xffff)
        return 0;
    uint32_t got = (uint32_t)(clock_hz / (d * 16));
    uint32_t off = got > baud ? got - baud : baud - got;
    if ((uint64_t)off * 100 > (uint64_t)baud * UART_RATE_TOLERANCE_PCT)
        return 0;
    *actual_baud = got;
    return (uint32_t)d;
}
