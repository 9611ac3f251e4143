/* Where output goes (console=serial|vga|both): records leave on the serial
 * port; a person watching the screen (VGA text, or the framebuffer on UEFI:
 * kernel/vga.h) gets human-readable progress, a status line and a summary
 * instead of raw JSON. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include "kernel/vga.h"
#include "lib/config.h"

/* The screen first, then the serial ports serial= chose (enum
 * serial_choice, or an I/O port). */
void console_init(uint32_t serial, uint32_t serial_clock);
/* On screen: which serial ports carry the records, or that none does and
 * what was probed (the hello record has the same in "serial"). */
void console_serial_summary(void);
void console_set_mode(enum console_mode mode);
/* The record writer's sink (see lib/record.h). */
void console_record_sink(void *ctx, const char *s, size_t n);
/* A human-readable line on the screen (and a banner line on serial). */
void console_say(enum vga_color color, const char *format, ...) __attribute__((format(printf, 2, 3)));
void console_banner_serial(const char *s);
void console_status(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
