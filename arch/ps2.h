/* The i8042 keyboard controller, polled (interrupts stay off): enough to
 * notice a key press, on a PS/2 keyboard or a USB one the firmware's legacy
 * emulation presents as PS/2. Every call reads the ports a bounded number of
 * times. */
#ifndef ARCH_PS2_H
#define ARCH_PS2_H

#include <stdbool.h>

#define PS2_DATA_PORT 0x60
#define PS2_STATUS_PORT 0x64
#define PS2_STATUS_OUTPUT_FULL 0x01
#define PS2_STATUS_AUX_DATA 0x20 /* the byte came from the mouse port */

/* A controller answers: its status port does not read 0xFF (an absent
 * device's floating bus). No promise that a key will come: Super I/O chips
 * and laptop embedded controllers keep an i8042 that a USB keyboard never
 * reaches when the firmware's legacy USB support is off, so a caller waits
 * for a key only with a time limit. Also throws away bytes already waiting. */
bool ps2_present(void);
/* One poll: true when a key's make code was waiting (break codes, prefixes,
 * acknowledgements and mouse bytes are read and ignored). */
bool ps2_key_pressed(void);

#endif
