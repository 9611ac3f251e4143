/* Records go to stdout, a line per write(2) so nothing is lost when a
 * fault ends the process inside a signal handler. The human-readable
 * screen output of the kernel has no counterpart here. */
#define _GNU_SOURCE
#include <unistd.h>

#include "kernel/console.h"
#include "kernel/serial.h"
#include "kernel/vga.h"

static char line[1 << 16];
static size_t used;

static void flush(void)
{
    size_t off = 0;
    while (off < used) {
        ssize_t n = write(STDOUT_FILENO, line + off, used - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    used = 0;
}

void console_record_sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++) {
        if (used == sizeof line)
            flush();
        line[used++] = s[i];
    }
    if (n && s[n - 1] == '\n')
        flush();
}

void console_init(uint32_t serial, uint32_t serial_clock)
{
    (void)serial;
    (void)serial_clock;
}
void console_set_mode(enum console_mode mode) { (void)mode; }
void console_say(enum vga_color color, const char *format, ...) { (void)color, (void)format; }
void console_status(const char *format, ...) { (void)format; }

void console_banner_serial(const char *s)
{
    console_record_sink(0, s, __builtin_strlen(s));
    console_record_sink(0, "\n", 1);
}

bool serial_present(void) { return true; }
void serial_write(const char *s, size_t n) { console_record_sink(0, s, n); }
void serial_drain(void) { flush(); }
void serial_report(void) {}             /* records go to stdout: no UART */
void console_serial_summary(void) {}
bool vga_present(void) { return false; }
const char *vga_screen_name(void) { return "none"; }
const char *vga_screen_geometry(void) { return 0; }
const char *vga_screen_why(void) { return "hosted build: the terminal shows the records"; }
const char *vga_screen_access(void) { return 0; }
