#include "arch/ps2.h"

#include "arch/x86.h"

#define STALE_BYTES_MAX 64 /* a full controller buffer and then some */

bool ps2_present(void)
{
    if (inb(PS2_STATUS_PORT) == 0xff)
        return false;
    for (int i = 0; i < STALE_BYTES_MAX && (inb(PS2_STATUS_PORT) & PS2_STATUS_OUTPUT_FULL); i++)
        (void)inb(PS2_DATA_PORT); /* keys pressed during the run do not count */
    return true;
}

bool ps2_key_pressed(void)
{
    uint8_t status = inb(PS2_STATUS_PORT);
    if (status == 0xff || !(status & PS2_STATUS_OUTPUT_FULL))
        return false;
    uint8_t code = inb(PS2_DATA_PORT);
    if (status & PS2_STATUS_AUX_DATA)
        return false;
    /* Scan code set 1 (what the controller's translation gives): make codes
     * are 0x01-0x58 and their 0xE0-prefixed twins; 0x80 and up are breaks,
     * prefixes (0xE0, 0xE1) and controller replies (0xFA, 0xFE). */
    return code != 0 && code < 0x80;
}
