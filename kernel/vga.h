/* The screen for a person watching: an 80x25 text grid (progress lines
 * that scroll, a status line at the bottom), shown in VGA text mode at
 * 0xB8000 on a BIOS boot, or drawn on the framebuffer a loader set up
 * (GRUB on UEFI: kernel/fbcon.c). With neither, vga_init() says so and
 * every call becomes a no-op. */
#ifndef KERNEL_VGA_H
#define KERNEL_VGA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGA_COLUMNS 80
#define VGA_ROWS 25

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
/* VGA text mode in use (hello.vga) */
bool vga_present(void);
/* hello.screen: "vga-text", "framebuffer" or "none" */
const char *vga_screen_name(void);
/* hello.fb: "WxHxBPP" of the graphics framebuffer the loader handed
 * over (used or not), or 0 when it gave none or reported EGA text. */
const char *vga_screen_geometry(void);
/* Why there is no screen (hello.screen_why), or 0 when there is one. */
const char *vga_screen_why(void);
/* On a framebuffer: how its pixels are reached ("direct", "pse36": see
 * kernel/fbcon.h); else 0. */
const char *vga_screen_access(void);
void vga_write(const char *s, size_t n, enum vga_color color);
/* The bottom line: a status (progress) that is overwritten, not scrolled. */
void vga_status(const char *s);
/* The screen is a framebuffer (kernel/fbcon.c), not VGA text. */
bool vga_on_framebuffer(void);
#endif
