/* The framebuffer console's bitmap font: printable ASCII (0x20-0x7E), each
 * glyph FONT_WIDTH x FONT_HEIGHT pixels, drawn as ASCII art in kernel/font.c
 * ('#' lit, '.' not). Rows 0-6 hold capitals and digits, rows 7-8 the
 * descenders. Every glyph differs from every other (0/O, 1/l/I):
 * tests/test_screen.py reads the art from font.c and checks it, then reads
 * screendumps with it. */
#ifndef KERNEL_FONT_H
#define KERNEL_FONT_H

#include <stdint.h>

#define FONT_WIDTH 5
#define FONT_HEIGHT 9
#define FONT_FIRST 0x20
#define FONT_LAST 0x7e

/* Row `row` of the glyph for c as a mask, bit FONT_WIDTH-1 the leftmost
 * pixel; a byte outside FONT_FIRST..FONT_LAST is drawn as '?'. */
uint8_t font_row(char c, int row);

#endif
