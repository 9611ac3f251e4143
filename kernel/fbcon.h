/* The text grid (kernel/vga.c) drawn on a linear framebuffer, for boots
 * where the loader set a graphics mode (GRUB on UEFI): each cell is
 * FBCON_CELL_WIDTH x FBCON_CELL_HEIGHT pixels of kernel/font.c, glyph at
 * the cell's top left one row down, all scaled by the largest integer that
 * fits 80x25 cells on the screen, the grid centred. 15, 16, 24 and 32 bits
 * per pixel, colours placed where the loader says.
 *
 * The framebuffer usually lies above RAM (0x80000000 under OVMF), outside
 * the identity map arch/paging.c builds, so nothing is drawn while paging
 * is on: fbcon_sync() draws only the cells that changed since it last
 * could, the next time paging is off. One above 4 GiB (a GPU's BAR with
 * Above-4G decoding or Resizable BAR) is drawn through a window of PSE-36
 * 4 MiB pages (arch/pse36.h) that arch/paging.c switches on only while
 * drawing; it copies the identity tables, so nothing is drawn before
 * paging_init (the screen catches up at the next sync after it). */
#ifndef KERNEL_FBCON_H
#define KERNEL_FBCON_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/bootinfo.h"

#define FBCON_CELL_WIDTH 6
#define FBCON_CELL_HEIGHT 12
#define FBCON_GLYPH_TOP 1 /* blank rows above the glyph in its cell */

/* Keeps the loader's framebuffer description (lib/bootinfo.h's copy). */
void fbcon_use_boot_fb(const struct boot_fb *given);
/* Whether the loader described a framebuffer, of which type, and where. */
bool fbcon_given(void);
uint8_t fbcon_given_type(void);
uint64_t fbcon_given_addr(void);
/* "WxHxBPP" of the framebuffer the loader gave, or 0 when it gave none. */
const char *fbcon_geometry(void);
/* provoke=fbwindow: draw through the PSE-36 window as if the framebuffer
 * lay above 4 GiB (before fbcon_init), so the path is tested where no
 * emulator puts one there. */
void fbcon_use_window(bool on);
/* Makes the console usable (the first draw clears the screen); 0 on
 * success, else why the framebuffer cannot be drawn on (type, depth, size,
 * above 4 GiB without PSE-36 or out of its reach). */
const char *fbcon_init(uint32_t columns, uint32_t rows);
/* How the pixels are reached once fbcon_init succeeded: "direct" (at their
 * physical address, paging off) or "pse36" (the window); 0 before. */
const char *fbcon_access(void);
/* Draws the cells of grid (VGA text cells: attribute << 8 | character,
 * columns x rows) that differ from what the screen shows; nothing while
 * paging is on. */
void fbcon_sync(const uint16_t *grid);

/* For the results' QR pages (kernel/qrshow.c), which cover the text grid:
 * the screen's size (false unless the console is ready and paging is off),
 * and a picture of the whole screen at one bit a pixel (`pitch` bytes a
 * row, the leftmost pixel in bit 7; set: white, clear: black). */
bool fbcon_screen_size(uint32_t *width, uint32_t *height);
void fbcon_show_bitmap(const uint8_t *bits, uint32_t pitch);

#endif
