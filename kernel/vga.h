/* VGA text-mode mirror (80x25 at 0xB8000) for a person watching the
 * screen on a BIOS boot. Absent on UEFI boots: vga_init() says so and every
 * call becomes a no-op. */
#ifndef KERNEL_VGA_H
#define KERNEL_VGA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGA_COLUMNS 80

enum vga_color {
    VGA_GREY = 0x07,
    VGA_WHITE = 0x0f,
    VGA_GREEN = 0x0a,
    VGA_RED = 0x0c,
    VGA_YELLOW = 0x0e,
    VGA_CYAN = 0x0b,
    VGA_BAR = 0x1f, /* white on blue: the status line */
};

bool vga_init(void);
bool vga_present(void);
void vga_write(const char *s, size_t n, enum vga_color color);
/* The bottom line: a status (progress) that is overwritten, not scrolled. */
void vga_status(const char *s);

#endif
