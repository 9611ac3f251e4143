#include "kernel/console.h"

#include "kernel/fmt.h"
#include "kernel/serial.h"
#include "kernel/string.h"

static enum console_mode mode = CONSOLE_BOTH;

void console_init(void)
{
    vga_init(); /* first: what serial_init finds (or not) can be said on screen */
    serial_init();
}

void console_set_mode(enum console_mode m) { mode = m; }

static bool to_serial(void) { return mode != CONSOLE_VGA; }
static bool to_vga(void) { return mode != CONSOLE_SERIAL; }

void console_record_sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    if (to_serial())
        serial_write(s, n);
}

void console_say(enum vga_color color, const char *format, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, format);
    size_t n = vfmt(line, sizeof line, format, ap);
    va_end(ap);
    if (n > VGA_COLUMNS) /* one screen line each: the serial records have it all */
        n = VGA_COLUMNS;
    if (to_vga()) {
        vga_write(line, n, color);
        vga_write("\n", 1, color);
    }
}

void console_banner_serial(const char *s)
{
    if (to_serial()) {
        serial_write(s, strlen(s));
        serial_write("\r\n", 2);
    }
}

void console_status(const char *format, ...)
{
    char line[96];
    va_list ap;
    va_start(ap, format);
    vfmt(line, sizeof line, format, ap);
    va_end(ap);
    if (to_vga())
        vga_status(line);
}
