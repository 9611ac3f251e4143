#include "kernel/qrshow.h"

#include "arch/ps2.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/fbcon.h"
#include "kernel/memory.h"
#include "kernel/recordlog.h"
#include "kernel/serial.h"
#include "kernel/vga.h"
#include "lib/base45.h"
#include "lib/crc32.h"
#include "lib/deflate.h"
#include "lib/fmt.h"
#include "lib/qr.h"
#include "lib/string.h"

#define TEXT_MAX 3400 /* version 40-M holds 3391 characters */

enum { LIGHT = VGA_WHITE & 15, DARK = 0 };

struct pages {
    size_t log_len;
    uint32_t log_crc;
    const uint8_t *deflated;
    size_t deflated_len;
    size_t chunk; /* bytes of deflate output per code (the last may be shorter) */
    uint32_t count;
    int version;  /* the largest the screen shows */
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

/* Chunk size and count: a code's text must fit the version, and its header
 * grows with the count's digits, so iterate until they agree. */
static bool plan_chunks(struct pages *p)
{
    size_t capacity = qr_alnum_capacity(p->version);
    uint32_t count = 1;
    for (int round = 0; round < 8; round++) {
        size_t digits = decimal_digits(count);
        size_t header = 4 + digits + 1 + digits + 1 + decimal_digits(p->log_len) + 1 + 9 + 9;
        if (header + 3 > capacity)
            return false;
        size_t chunk = (capacity - header) / 3 * 2; /* base45: 3 characters per 2 bytes */
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

static void caption(const struct pages *p, uint32_t i, char *line, size_t size)
{
    fmt(line, size, "results QR %u of %u: any key for the next%s", i + 1, p->count,
        p->cut ? " (log cut: buffer full)" : "");
}

/* --- framebuffer -------------------------------------------------------------- */

static uint32_t text_scale(uint32_t width) { return width >= 640 ? 2 : 1; }
static uint32_t text_band(uint32_t width) { return (FBCON_CELL_HEIGHT + 2) * text_scale(width); }

static int framebuffer_version(void)
{
    uint32_t w, h;
    if (!fbcon_screen_size(&w, &h) || h <= text_band(w))
        return 0;
    uint32_t side = w < h - text_band(w) ? w : h - text_band(w);
    int modules = (int)(side / QRSHOW_MODULE_PIXELS) - 2 * QR_QUIET_ZONE;
    int version = (modules - 17) / 4;
    return version < 1 ? 0 : version > QR_VERSION_MAX ? QR_VERSION_MAX : version;
}

static void draw_framebuffer(const struct pages *p, uint32_t i)
{
    uint32_t w, h;
    if (!fbcon_screen_size(&w, &h))
        return;
    const struct qr_code *qr = p->code;
    uint32_t band = text_band(w), side = w < h - band ? w : h - band;
    uint32_t px = side / (uint32_t)(qr->size + 2 * QR_QUIET_ZONE);
    uint32_t x0 = (w - px * (uint32_t)qr->size) / 2, y0 = (h - band - px * (uint32_t)qr->size) / 2;
    fbcon_fill_rect(0, 0, w, h, LIGHT); /* the whole screen: a wide quiet zone */
    for (int y = 0; y < qr->size; y++)
        for (int x = 0; x < qr->size; x++)
            if (qr_module(qr, x, y))
                fbcon_fill_rect(x0 + (uint32_t)x * px, y0 + (uint32_t)y * px, px, px, DARK);
    char line[96];
    caption(p, i, line, sizeof line);
    uint32_t ts = text_scale(w), tw = (uint32_t)strlen(line) * FBCON_CELL_WIDTH * ts;
    fbcon_draw_text(tw < w ? (w - tw) / 2 : 0, h - band + ts, ts, line, DARK, LIGHT);
}

/* --- VGA text: two modules per cell, one above the other ---------------------- */

#define VGA_CODE_ROWS (VGA_ROWS - 1) /* the last row names the page */

static int vga_text_version(void)
{
    int modules = 2 * VGA_CODE_ROWS - 2 * QRSHOW_VGA_QUIET;
    if (modules > VGA_COLUMNS - 2 * QR_QUIET_ZONE)
        modules = VGA_COLUMNS - 2 * QR_QUIET_ZONE;
    int version = (modules - 17) / 4;
    return version < 1 ? 0 : version;
}

static void draw_vga_text(const struct pages *p, uint32_t i)
{
    /* Light is bright white foreground (a background that bright would
     * blink), dark is the black background: CP437 0xDB full block, 0xDF
     * upper half, 0xDC lower half, or a space. */
    enum { CELL_ATTR = 0x0f, CAPTION_ATTR = 0x70, FULL = 0xdb, UPPER = 0xdf, LOWER = 0xdc };
    const struct qr_code *qr = p->code;
    int x0 = (VGA_COLUMNS - qr->size) / 2, y0 = (2 * VGA_CODE_ROWS - qr->size) / 2;
    for (int row = 0; row < VGA_CODE_ROWS; row++)
        for (int col = 0; col < VGA_COLUMNS; col++) {
            int x = col - x0, top = 2 * row - y0, bottom = top + 1;
            bool in_x = x >= 0 && x < qr->size;
            bool top_dark = in_x && top >= 0 && top < qr->size && qr_module(qr, x, top);
            bool bottom_dark = in_x && bottom >= 0 && bottom < qr->size && qr_module(qr, x, bottom);
            uint8_t ch = top_dark ? (bottom_dark ? ' ' : LOWER) : (bottom_dark ? UPPER : FULL);
            vga_put_raw(row, col, ch, CELL_ATTR);
        }
    char line[96];
    caption(p, i, line, sizeof line);
    size_t n = strlen(line);
    for (int col = 0; col < VGA_COLUMNS; col++)
        vga_put_raw(VGA_ROWS - 1, col, (size_t)col < n ? (uint8_t)line[col] : ' ', CAPTION_ATTR);
}

/* --- paging --------------------------------------------------------------------- */

static void wait_for_next(bool keyboard)
{
    if (keyboard) { /* a person (or the host's sendkey) turns the pages */
        while (!ps2_key_pressed())
            cpu_pause();
        return;
    }
    uint64_t hz = tsc_info()->hz;
    if (hz) {
        uint64_t start = rdtsc();
        while (rdtsc() - start < hz * QRSHOW_PAGE_SECONDS)
            cpu_pause();
    } else { /* no TSC figure (or no TSC): a fixed count of port reads */
        for (uint32_t i = 0; i < QRSHOW_PAGE_POLLS; i++)
            (void)inb(PS2_STATUS_PORT);
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
    const uint8_t *log = recordlog_data(&p.log_len);
    p.version = vga_on_framebuffer() ? framebuffer_version() : vga_present() ? vga_text_version() : 0;
    if (!log || !p.version) {
        console_say(VGA_RED, "no QR codes: %s", !log ? "no memory kept for the record log" : "no screen to show them on");
        return;
    }
    serial_drain(); /* whatever carried done (if anything) has it all */
    console_status(" cleanroom: done; compressing %u bytes of records for the QR codes", (unsigned)p.log_len);
    p.cut = recordlog_cut();
    p.log_crc = crc32(log, p.log_len);
    struct deflate_work *work = memory_alloc(sizeof *work, 16);
    uint8_t *out = memory_alloc((uint32_t)deflate_bound(p.log_len), 16);
    p.code = memory_alloc(sizeof *p.code, 16);
    if (!work || !out || !p.code) {
        console_say(VGA_RED, "no QR codes: not enough free memory to compress the record log");
        return;
    }
    p.deflated_len = deflate_fixed(log, p.log_len, out, work);
    p.deflated = out;
    if (!plan_chunks(&p)) {
        console_say(VGA_RED, "no QR codes: the screen's largest code (version %d) holds too little", p.version);
        return;
    }
    bool keyboard = ps2_present();
    for (uint32_t i = 0;; i = (i + 1) % p.count) {
        size_t n = page_text(&p, i);
        qr_encode_alnum(p.code, p.text, n, qr_fit_version(n, p.version));
        if (vga_on_framebuffer())
            draw_framebuffer(&p, i);
        else
            draw_vga_text(&p, i);
        wait_for_next(keyboard);
    }
}
