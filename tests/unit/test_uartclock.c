/* lib/uartclock.c: divisors from a UART's clock, and the card table. */
#include "lib/uartclock.h"
#include "unit.h"

int main(void)
{
    uint32_t got;
    CHECK(uart_divisor(UART_STANDARD_CLOCK, 115200, &got) == 1 && got == 115200);
    CHECK(uart_divisor(8 * UART_STANDARD_CLOCK, 115200, &got) == 8 && got == 115200);   /* Exar's 14.7456 MHz */
    CHECK(uart_divisor(16 * UART_STANDARD_CLOCK, 115200, &got) == 16 && got == 115200);
    /* Oxford's 62.5 MHz / 4: 3.90625 MHz gives 122070 or 108506 baud: neither is 115200 within 2 % */
    CHECK(uart_divisor(3906250, 115200, &got) == 0 && got == 0);
    /* 1.8432 MHz cannot go faster than 115200 */
    CHECK(uart_divisor(UART_STANDARD_CLOCK, 230400, &got) == 0);
    CHECK(uart_divisor(UART_STANDARD_CLOCK, 9600, &got) == 12 && got == 9600);
    CHECK(uart_divisor(0, 115200, &got) == 0);
    const struct uart_model *m = uart_model_find(0x1b36, 0x0003);
    CHECK(m && m->ports == 2 && m->stride == 8 && m->clock_hz == UART_STANDARD_CLOCK);
    m = uart_model_find(0x13a8, 0x0154);
    CHECK(m && m->clock_hz == 14745600 && m->ports == 4);
    CHECK(uart_model_find(0x1415, 0xc158) == 0); /* Oxford OXPCIe952: not known, so unverified */
    return unit_finish();
}
