/* VGA graphics mode 12h (640x480, 16 colours, four bit planes), set by
 * programming the VGA registers directly (no BIOS call: the kernel runs in
 * protected mode with interrupts off), as Linux's vga16fb does. For the
 * results' QR pages on a screen that is in VGA text mode (a BIOS boot):
 * 640x480 pixels hold several codes where 80x25 text cells hold one small
 * one. One way: nothing switches back to text. */
#ifndef KERNEL_VGAGFX_H
#define KERNEL_VGAGFX_H

#include <stdint.h>

#define VGAGFX_WIDTH 640
#define VGAGFX_HEIGHT 480

/* Switches a VGA in text mode to mode 12h, the screen black. Paging off
 * (the planes are written at 0xA0000). */
void vgagfx_init(void);
/* Shows a 1-bit-per-pixel picture of the whole screen: VGAGFX_WIDTH / 8
 * bytes a row, the leftmost pixel in bit 7, a set bit white, a clear one
 * black. */
void vgagfx_show(const uint8_t *bits);

#endif
