#include "kernel/fbcon.h"

#include "arch/mmu.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "kernel/font.h"
#include "kernel/memory.h"
#include "lib/fmt.h"

#define MAX_CELLS (80 * 25)
#define FOUR_GIB ((uint64_t)1 << 32)

/* What the loader said, copied before the multiboot data can go. */
static struct boot_fb fb;

static char geometry[40];
static bool ready, cleared;
static volatile uint8_t *base; /* where the pixels are while drawing: 0 until known */
/* Above 4 GiB (or provoke=fbwindow): drawn through arch/paging.c's PSE-36
 * window, which exists once paging_init has built the tables it copies. */
static bool high, force_window;
static struct pse36_window window;
static struct paging_window window_dir;
static uint32_t columns, rows, scale, bytes_per_pixel, origin_x, origin_y;
static uint32_t palette[16];
/* What the screen shows, cell by cell (a VGA text cell each). */
static uint16_t shown[MAX_CELLS];

/* The 16 VGA text colours as 8-bit RGB. */
static const uint8_t vga_rgb[16][3] = {
    { 0x00, 0x00, 0x00 }, { 0x00, 0x00, 0xaa }, { 0x00, 0xaa, 0x00 }, { 0x00, 0xaa, 0xaa },
    { 0xaa, 0x00, 0x00 }, { 0xaa, 0x00, 0xaa }, { 0xaa, 0x55, 0x00 }, { 0xaa, 0xaa, 0xaa },
    { 0x55, 0x55, 0x55 }, { 0x55, 0x55, 0xff }, { 0x55, 0xff, 0x55 }, { 0x55, 0xff, 0xff },
    { 0xff, 0x55, 0x55 }, { 0xff, 0x55, 0xff }, { 0xff, 0xff, 0x55 }, { 0xff, 0xff, 0xff },
};

void fbcon_use_boot_fb(const struct boot_fb *given)
{
    if (!given->given)
        return;
    fb = *given;
    fmt(geometry, sizeof geometry, "%ux%ux%u", fb.width, fb.height, fb.bpp);
}

bool fbcon_given(void) { return fb.given; }
uint8_t fbcon_given_type(void) { return fb.type; }
uint64_t fbcon_given_addr(void) { return fb.addr; }
const char *fbcon_geometry(void) { return fb.given ? geometry : 0; }

static uint32_t channel(uint8_t value, uint8_t pos, uint8_t size)
{
    if (size == 0)
        return 0;
    if (size > 8)
        size = 8;
    return (uint32_t)(value >> (8 - size)) << pos;
}

static void put_pixel(volatile uint8_t *p, uint32_t v)
{
    switch (bytes_per_pixel) {
    case 4: *(volatile uint32_t *)p = v; break;
    case 3: p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16); break;
    default: *(volatile uint16_t *)p = (uint16_t)v; break;
    }
}

static void fill_line(volatile uint8_t *p, uint32_t pixels, uint32_t v)
{
    for (uint32_t x = 0; x < pixels; x++, p += bytes_per_pixel)
        put_pixel(p, v);
}

void fbcon_use_window(bool on) { force_window = on; }

const char *fbcon_init(uint32_t cols, uint32_t nrows)
{
    if (!fb.given)
        return "the boot loader set no graphics mode";
    if (fb.type != BOOT_FB_RGB)
        return fb.type == BOOT_FB_EGA_TEXT ? "the framebuffer is EGA text"
                                                          : "the framebuffer has indexed colours";
    if (fb.bpp != 15 && fb.bpp != 16 && fb.bpp != 24 && fb.bpp != 32)
        return "the framebuffer's depth is not 15, 16, 24 or 32 bits per pixel";
    if (cols * nrows > MAX_CELLS)
        return "the text grid is larger than the console keeps";
    uint32_t sx = fb.width / (cols * FBCON_CELL_WIDTH), sy = fb.height / (nrows * FBCON_CELL_HEIGHT);
    scale = sx < sy ? sx : sy;
    if (scale == 0)
        return "the framebuffer is too small for 80x25 cells of 6x12 pixels";
    bytes_per_pixel = (fb.bpp + 7u) / 8u;
    if (fb.pitch < fb.width * bytes_per_pixel)
        return "the framebuffer's pitch is shorter than a line of pixels";
    if (read_cr0() & CR0_PG)
        return "paging is on: the framebuffer is not mapped";
    uint64_t size = (uint64_t)fb.pitch * fb.height;
    high = force_window || fb.addr + size > FOUR_GIB;
    if (high) {
        const char *why = pse36_window_plan(fb.addr, size, memory_top(), paging_pse36_bits(), &window);
        if (why)
            return why;
    } else {
        base = (volatile uint8_t *)(uint32_t)fb.addr;
    }
    columns = cols, rows = nrows;
    origin_x = (fb.width - cols * FBCON_CELL_WIDTH * scale) / 2;
    origin_y = (fb.height - nrows * FBCON_CELL_HEIGHT * scale) / 2;
    for (int i = 0; i < 16; i++)
        palette[i] = channel(vga_rgb[i][0], fb.red_pos, fb.red_size) |
                     channel(vga_rgb[i][1], fb.green_pos, fb.green_size) |
                     channel(vga_rgb[i][2], fb.blue_pos, fb.blue_size);
    for (uint32_t i = 0; i < cols * nrows; i++)
        shown[i] = ' '; /* black on black: what the cleared screen shows */
    ready = true;
    return 0;
}

const char *fbcon_access(void)
{
    if (!ready)
        return 0;
    return high ? "pse36" : "direct";
}

/* Whether the pixels can be reached now: only while paging is off (the
 * identity maps leave the framebuffer out, and benchmarks may be timing
 * with paging on); above 4 GiB once the window could be built. */
static bool drawable(void)
{
    if (!ready || (read_cr0() & CR0_PG))
        return false;
    if (high && !base) {
        if (paging_window_build(&window, &window_dir))
            return false;
        base = (volatile uint8_t *)(uintptr_t)window.va;
    }
    return true;
}

/* end_draw() after every true. The first draw blackens the whole screen:
 * GRUB's and the firmware's text goes. */
static bool begin_draw(void)
{
    if (!drawable() || (high && !paging_window_enter(&window_dir)))
        return false;
    if (!cleared) {
        for (uint32_t y = 0; y < fb.height; y++)
            fill_line(base + y * fb.pitch, fb.width, palette[0]);
        cleared = true;
    }
    return true;
}

static void end_draw(void)
{
    if (high)
        paging_window_leave();
}

static void draw_cell(uint32_t r, uint32_t c, uint16_t cell)
{
    char ch = (char)(cell & 0xff);
    uint32_t fg = palette[cell >> 8 & 0xf], bg = palette[cell >> 12 & 0xf];
    uint32_t x0 = origin_x + c * FBCON_CELL_WIDTH * scale;
    uint32_t y0 = origin_y + r * FBCON_CELL_HEIGHT * scale;
    for (uint32_t y = 0; y < FBCON_CELL_HEIGHT * scale; y++) {
        uint8_t bits = font_row(ch, (int)(y / scale) - FBCON_GLYPH_TOP);
        volatile uint8_t *p = base + (y0 + y) * fb.pitch + x0 * bytes_per_pixel;
        for (uint32_t x = 0; x < FBCON_CELL_WIDTH * scale; x++, p += bytes_per_pixel) {
            uint32_t gx = x / scale;
            bool lit = gx < FONT_WIDTH && (bits >> (FONT_WIDTH - 1 - gx) & 1);
            put_pixel(p, lit ? fg : bg);
        }
    }
}

/* A blank cell shows its background alone: the foreground does not matter. */
static bool looks_same(uint16_t a, uint16_t b)
{
    if ((a & 0xff) == ' ' && (b & 0xff) == ' ')
        return (a & 0xf000) == (b & 0xf000);
    return a == b;
}

void fbcon_sync(const uint16_t *grid)
{
    if (!begin_draw())
        return;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < columns; c++) {
            uint32_t i = r * columns + c;
            if (!looks_same(grid[i], shown[i])) {
                draw_cell(r, c, grid[i]);
                shown[i] = grid[i];
            }
        }
    end_draw();
}

bool fbcon_screen_size(uint32_t *width, uint32_t *height)
{
    if (!drawable())
        return false;
    *width = fb.width, *height = fb.height;
    return true;
}

/* The grid's cells may be covered: a later sync redraws them all. */
static void forget_shown(void)
{
    for (uint32_t i = 0; i < columns * rows; i++)
        shown[i] = 0xffff;
}

void fbcon_show_bitmap(const uint8_t *bits, uint32_t pitch)
{
    if (!begin_draw())
        return;
    for (uint32_t y = 0; y < fb.height; y++) {
        volatile uint8_t *p = base + y * fb.pitch;
        const uint8_t *line = bits + y * pitch;
        for (uint32_t x = 0; x < fb.width; x++, p += bytes_per_pixel)
            put_pixel(p, palette[line[x / 8] >> (7 - x % 8) & 1 ? 15 : 0]);
    }
    end_draw();
    forget_shown();
}
