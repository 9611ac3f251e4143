#include "kernel/console.h"

#include "kernel/recordlog.h"
#include "kernel/serial.h"
#include "lib/fmt.h"
#include "lib/string.h"

static enum console_mode mode = CONSOLE_BOTH;

void console_init(uint32_t serial, uint32_t serial_clock)
{
    vga_init(); /* first: what serial_init finds (or not) can be said on screen */
    serial_init(serial, serial_clock);
}

static void port_label(char *buf, size_t size, const struct serial_port *p)
{
    if (p->is_pci)
        fmt(buf, size, "PCI %02x:%02x.%x port 0x%x", p->pci.bus, p->pci.dev, p->pci.func, p->base);
    else {
        size_t n = fmt(buf, size, "%s 0x%x (%s)", p->kind, p->base, p->source);
        for (size_t i = 0; i < n && i < size && buf[i] != ' '; i++)
            if (buf[i] >= 'a' && buf[i] <= 'z')
                buf[i] = (char)(buf[i] - 'a' + 'A'); /* COM2, as the BIOS setup calls it */
    }
}

void console_serial_summary(void)
{
    uint32_t n;
    const struct serial_port *ports = serial_ports(&n);
    char label[48];
    if (serial_choice() == SERIAL_NONE) {
        console_say(VGA_GREY, "serial=none: no UART touched, records go nowhere");
        return;
    }
    if (serial_present()) {
        for (uint32_t i = 0; i < n; i++) {
            if (!ports[i].used)
                continue;
            port_label(label, sizeof label, &ports[i]);
            if (ports[i].rate[0] == 'u') /* "unverified": the card's clock is anybody's guess */
                console_say(VGA_YELLOW, "serial: records on %s, 115200 8N1 if its UART clock is 1.8432 MHz "
                            "(unverified: serial_clock=HZ sets it)", label);
            else
                console_say(VGA_GREY, "serial: records on %s, 115200 8N1", label);
        }
        return;
    }
    /* Nothing carries the records: say so, or a PC without COM1 looks dead. */
    console_say(VGA_RED, "no working serial port: the records are not delivered; probed:");
    bool any_pci = false;
    for (uint32_t i = 0; i < n; i++) {
        const struct serial_port *p = &ports[i];
        any_pci |= p->is_pci;
        port_label(label, sizeof label, p);
        if (p->works)
            console_say(VGA_YELLOW, "  %s works, not chosen by serial=", label);
        else
            console_say(VGA_YELLOW, "  %s: %s", label, p->problem ? p->problem : "no usable I/O port");
    }
    if (!any_pci)
        console_say(VGA_YELLOW, serial_pci_scanned() ? "  PCI: no 16550-compatible UART (class 07/00)"
                                                      : "  PCI: no configuration space (mechanism #1)");
}

void console_set_mode(enum console_mode m) { mode = m; }

static bool to_serial(void) { return mode != CONSOLE_VGA; }
static bool to_vga(void) { return mode != CONSOLE_SERIAL; }

void console_record_sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    recordlog_append(s, n); /* for the QR codes, whether or not a port carries them */
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
