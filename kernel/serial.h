/* 16550 UART on COM1, 115200 8N1, polled. Every wait is bounded, so a
 * machine without a UART (or with a wedged one) never hangs: output is
 * then dropped and serial_present() says so. */
#ifndef KERNEL_SERIAL_H
#define KERNEL_SERIAL_H

#include <stdbool.h>
#include <stddef.h>

#define COM1_PORT 0x3f8
#define SERIAL_BAUD 115200

bool serial_init(void);
bool serial_present(void);
void serial_write(const char *s, size_t n);
/* Waits (bounded) until the transmitter is empty: call before an exit that
 * stops the machine at once, or the last bytes are lost. */
void serial_drain(void);

#endif
