#include "kernel/qrshow.h"

#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/ps2.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/fbcon.h"
#include "kernel/font.h"
#include "kernel/memory.h"
#include "kernel/recordlog.h"
#include "kernel/serial.h"
#include "kernel/vga.h"
#include "kernel/vgagfx.h"
#include "lib/base45.h"
#include "lib/crc32.h"
#include "lib/deflate.h"
#include "lib/fmt.h"
#include "lib/qr.h"
#include "lib/string.h"

#define TEXT_MAX 3400 /* version 40-M holds 3391 characters */

struct pages {
    size_t log_len;
    uint32_t log_crc;
    const uint8_t *deflated;
    size_t deflated_len;
    size_t chunk; /* bytes of deflate output per code (the last may be shorter) */
    uint32_t count;
    int version;  /* the layout's (the last code may be smaller) */
    bool cut;
    struct qr_code *code;
    char text[TEXT_MAX + 1];
};

static size_t decimal_digits(uint64_t v)
{
    size_t n = 1;
    while (v >= 10)
        v /= 10, n++;
    return n;
}

/* Bytes of D a code of this version holds: what its header (whose count has the digits of
 * `count`) leaves, at 3 base45 characters per 2 bytes; 0 when nothing fits. */
static size_t chunk_bytes(int version, size_t count, size_t log_len)
{
    size_t capacity = qr_alnum_capacity(version), digits = decimal_digits(count);
    size_t header = 4 + digits + 1 + digits + 1 + decimal_digits(log_len) + 1 + 9 + 9;
    return header + 3 > capacity ? 0 : (capacity - header) / 3 * 2;
}

/* Chunk size and count: a code's text must fit the version, and its header
 * grows with the count's digits, so iterate until they agree. */
static bool plan_chunks(struct pages *p)
{
    uint32_t count = 1;
    for (int round = 0; round < 8; round++) {
        size_t chunk = chunk_bytes(p->version, count, p->log_len);
        if (!chunk)
            return false;
        uint32_t need = (uint32_t)((p->deflated_len + chunk - 1) / chunk);
        if (need == 0)
            need = 1;
        p->chunk = chunk;
        if (need == count)
            return true;
        count = need;
        p->count = count;
    }
    return false;
}

static size_t put_hex8(char *out, uint32_t v)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int i = 0; i < 8; i++)
        out[i] = hex[v >> (28 - 4 * i) & 15];
    return 8;
}

static size_t page_text(struct pages *p, uint32_t i)
{
    size_t start = (size_t)i * p->chunk;
    size_t len = p->deflated_len - start < p->chunk ? p->deflated_len - start : p->chunk;
    const uint8_t *chunk = p->deflated + start;
    size_t n = fmt(p->text, sizeof p->text, "CR1/%u/%u/%u/", i, p->count, (unsigned)p->log_len);
    n += put_hex8(p->text + n, p->log_crc);
    p->text[n++] = '/';
    n += put_hex8(p->text + n, crc32(chunk, len));
    p->text[n++] = '/';
    n += base45_encode(chunk, len, p->text + n);
    return n;
}

/* --- the screen: codes in a grid, a caption under them ------------------------------ */

/* The whole screen as one bit a pixel (set: light), drawn off-screen and then shown at once
 * on the framebuffer or in VGA mode 12h. */
struct canvas {
    uint8_t *bits;
    uint32_t width, height, pitch; /* pitch: bytes a row */
};

/* Where the codes of one screen go. */
struct layout {
    int version;              /* of every code but perhaps the last */
    uint32_t module;          /* pixels a module's side */
    uint32_t columns, rows;   /* codes a screen: columns x rows */
    uint32_t x0, y0, step;    /* the first code's top left pixel; from one code to the next */
    uint32_t caption_y;       /* the caption's top */
};

static void fill(const struct canvas *c, uint32_t x, uint32_t y, uint32_t w, uint32_t h, bool light)
{
    if (x >= c->width || y >= c->height)
        return;
    uint32_t right = w < c->width - x ? x + w : c->width, bottom = h < c->height - y ? y + h : c->height;
    for (uint32_t row = y; row < bottom; row++) {
        uint8_t *line = c->bits + row * c->pitch;
        for (uint32_t col = x; col < right;) {
            if (col % 8 == 0 && right - col >= 8) { /* a whole byte */
                line[col / 8] = light ? 0xff : 0;
                col += 8;
                continue;
            }
            uint8_t bit = (uint8_t)(0x80 >> (col % 8));
            line[col / 8] = light ? (uint8_t)(line[col / 8] | bit) : (uint8_t)(line[col / 8] & ~bit);
            col++;
        }
    }
}

/* One line in the kernel's font (kernel/font.c), dark on light, each font pixel scale x scale. */
static void draw_text(const struct canvas *c, uint32_t x, uint32_t y, uint32_t scale, const char *s)
{
    for (; *s; s++, x += FBCON_CELL_WIDTH * scale)
        for (int gy = 0; gy < FONT_HEIGHT; gy++) {
            uint8_t bits = font_row(*s, gy);
            for (int gx = 0; gx < FONT_WIDTH; gx++)
                if (bits >> (FONT_WIDTH - 1 - gx) & 1)
                    fill(c, x + (uint32_t)gx * scale, y + (uint32_t)(gy + FBCON_GLYPH_TOP) * scale, scale, scale,
                         false);
        }
}

static uint32_t caption_scale(uint32_t width) { return width >= 640 ? 2 : 1; }
static uint32_t caption_band(uint32_t width) { return (FBCON_CELL_HEIGHT + 2) * caption_scale(width); }

/* Codes of `size` modules side by side in `span` modules, each with a quiet zone of
 * QR_QUIET_ZONE light modules (neighbours share theirs). */
static uint32_t codes_across(uint32_t span, int size)
{
    return span < QR_QUIET_ZONE ? 0 : (span - QR_QUIET_ZONE) / (uint32_t)(size + QR_QUIET_ZONE);
}

/* Sized for the camera, not for the screen: modules no smaller than 1/QRSHOW_SCREEN_MODULES of
 * the screen's width and versions up to QRSHOW_VERSION_MAX; of those, the version whose grid
 * holds the most bytes of D a screen (the smaller one on a tie). */
static bool choose_layout(struct layout *l, const struct pages *p, uint32_t width, uint32_t height)
{
    uint32_t band = caption_band(width);
    if (height <= band)
        return false;
    l->module = (width + QRSHOW_SCREEN_MODULES - 1) / QRSHOW_SCREEN_MODULES;
    uint32_t across = width / l->module, down = (height - band) / l->module;
    size_t best = 0;
    for (int v = 1; v <= QRSHOW_VERSION_MAX; v++) {
        uint32_t columns = codes_across(across, qr_size(v)), rows = codes_across(down, qr_size(v));
        /* the count has at most as many digits as D has bytes */
        size_t bytes = (size_t)columns * rows * chunk_bytes(v, p->deflated_len, p->log_len);
        if (bytes > best)
            best = bytes, l->version = v, l->columns = columns, l->rows = rows;
    }
    if (!best)
        return false;
    uint32_t size = (uint32_t)qr_size(l->version);
    l->step = (size + QR_QUIET_ZONE) * l->module;
    l->x0 = (width - (l->columns * l->step - QR_QUIET_ZONE * l->module)) / 2;
    l->y0 = (height - band - (l->rows * l->step - QR_QUIET_ZONE * l->module)) / 2;
    l->caption_y = height - band + caption_scale(width);
    return true;
}

static void draw_code(const struct canvas *c, const struct qr_code *qr, uint32_t x0, uint32_t y0, uint32_t px)
{
    for (int y = 0; y < qr->size; y++)
        for (int x = 0; x < qr->size; x++)
            if (qr_module(qr, x, y))
                fill(c, x0 + (uint32_t)x * px, y0 + (uint32_t)y * px, px, px, false);
}

/* Screen `screen`: its codes in a grid, left to right and top to bottom, and a caption naming
 * them ("results QR 7-12 of 40: ..."). */
static void draw_screen(struct pages *p, const struct layout *l, const struct canvas *c, uint32_t screen)
{
    uint32_t per_screen = l->columns * l->rows, first = screen * per_screen;
    uint32_t last = first + per_screen < p->count ? first + per_screen - 1 : p->count - 1;
    fill(c, 0, 0, c->width, c->height, true); /* the whole screen light: a wide quiet zone */
    for (uint32_t i = first; i <= last; i++) {
        size_t n = page_text(p, i);
        qr_encode_alnum(p->code, p->text, n, qr_fit_version(n, l->version));
        uint32_t slot = i - first;
        draw_code(c, p->code, l->x0 + slot % l->columns * l->step, l->y0 + slot / l->columns * l->step, l->module);
    }
    char line[96], range[24];
    if (last > first)
        fmt(range, sizeof range, "%u-%u", first + 1, last + 1);
    else
        fmt(range, sizeof range, "%u", first + 1);
    fmt(line, sizeof line, "results QR %s of %u%s: next on a key or in %u s", range, p->count,
        p->cut ? " (log cut)" : "", QRSHOW_PAGE_SECONDS);
    uint32_t scale = caption_scale(c->width), chars = (uint32_t)strlen(line);
    if (chars * FBCON_CELL_WIDTH * scale > c->width)
        scale = 1;
    uint32_t tw = chars * FBCON_CELL_WIDTH * scale;
    draw_text(c, tw < c->width ? (c->width - tw) / 2 : 0, l->caption_y, scale, line);
}

/* --- paging --------------------------------------------------------------------- */

/* Between two polls the CPU halts until the local APIC's timer, armed for QRSHOW_NAP_TICKS of its
 * clock (1 ms at QEMU's 1 GHz, 10 ms on a 100 MHz bus), ends the halt: nothing is measured any more,
 * and a screen left up for hours then costs the CPU (or an emulator's host) almost nothing. Without
 * an APIC, or without a TSC rate to end the page by, it spins. */
static bool can_nap(void)
{
    const struct lapic_info *l = lapic_info()->present ? lapic_info() : lapic_init();
    if (!l->present || !tsc_info()->hz)
        return false;
    idt_set_wake_handler(lapic_eoi); /* the timer's vector: the halt is over, nothing else to do */
    return true;
}

/* The next screen on a key press or after QRSHOW_PAGE_SECONDS, whichever comes first: an i8042
 * that answers need not pass keys on (a USB keyboard without the firmware's legacy support). */
static void wait_for_next(bool keyboard, bool nap)
{
    uint64_t hz = tsc_info()->hz, start = hz ? rdtsc() : 0;
    for (uint32_t polls = 0;; polls++) { /* each poll reads the status port: ~1 us */
        if (keyboard && ps2_key_pressed())
            return;
        if (!keyboard)
            (void)inb(PS2_STATUS_PORT);
        if (hz ? rdtsc() - start >= hz * QRSHOW_PAGE_SECONDS : polls >= QRSHOW_PAGE_POLLS)
            return;
        if (nap && lapic_timer_once(QRSHOW_NAP_TICKS, VEC_WAKE))
            halt_until_interrupt();
        else
            cpu_pause();
    }
}

/* Whether to show them; says why not when qr=on asked and the run leaves. */
static bool wanted(void)
{
    enum qr_mode mode = recordlog_qr_mode();
    if (mode == QR_OFF || (mode == QR_AUTO && serial_present()))
        return false;
    if (!exit_halts()) {
        if (mode == QR_ON)
            console_say(VGA_YELLOW, "qr=on: no QR codes: exit=%s leaves the emulator (exit=halt shows them)",
                        exit_method_name());
        return false;
    }
    return true;
}

void qrshow_results(void)
{
    if (!wanted())
        return;
    static struct pages p;
    static struct layout layout;
    struct canvas canvas = { 0, VGAGFX_WIDTH, VGAGFX_HEIGHT, VGAGFX_WIDTH / 8 };
    const uint8_t *log = recordlog_data(&p.log_len);
    /* a framebuffer at its size; VGA text becomes 640x480 graphics */
    bool framebuffer = vga_on_framebuffer();
    bool screen = framebuffer ? fbcon_screen_size(&canvas.width, &canvas.height) : vga_present();
    if (!log || !screen) {
        console_say(VGA_RED, "no QR codes: %s", !log ? "no memory kept for the record log" : "no screen to show them on");
        return;
    }
    canvas.pitch = (canvas.width + 7) / 8;
    serial_drain(); /* whatever carried done (if anything) has it all */
    console_status(" cleanroom: done; compressing %u bytes of records for the QR codes", (unsigned)p.log_len);
    p.cut = recordlog_cut();
    p.log_crc = crc32(log, p.log_len);
    struct deflate_work *work = memory_alloc(sizeof *work, 16);
    uint8_t *out = memory_alloc((uint32_t)deflate_bound(p.log_len), 16);
    p.code = memory_alloc(sizeof *p.code, 16);
    canvas.bits = memory_alloc(canvas.pitch * canvas.height, 16);
    if (!work || !out || !p.code || !canvas.bits) {
        console_say(VGA_RED, "no QR codes: not enough free memory to compress the record log");
        return;
    }
    p.deflated_len = deflate_fixed(log, p.log_len, out, work);
    p.deflated = out;
    bool fits = choose_layout(&layout, &p, canvas.width, canvas.height);
    p.version = layout.version;
    if (!fits || !plan_chunks(&p)) {
        console_say(VGA_RED, "no QR codes: the screen (%ux%u) is too small for them", canvas.width, canvas.height);
        return;
    }
    if (!framebuffer)
        vgagfx_init(); /* VGA text: 640x480 graphics from here on */
    bool keyboard = ps2_present(), nap = can_nap();
    uint32_t per_screen = layout.columns * layout.rows, screens = (p.count + per_screen - 1) / per_screen;
    for (uint32_t screen = 0;; screen = (screen + 1) % screens) {
        draw_screen(&p, &layout, &canvas, screen);
        if (framebuffer)
            fbcon_show_bitmap(canvas.bits, canvas.pitch);
        else
            vgagfx_show(canvas.bits);
        wait_for_next(keyboard, nap);
    }
}
