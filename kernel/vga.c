#include "kernel/vga.h"

#include "kernel/fbcon.h"
#include "lib/string.h"

#define VGA_TEXT ((volatile uint16_t *)0xb8000)
#define COLS VGA_COLUMNS
#define ROWS VGA_ROWS
#define TEXT_ROWS (ROWS - 1) /* the last row is the status line */

/* The BIOS data area word at 0x463 holds the CRT controller's port: 0x3D4
 * (colour) or 0x3B4 (mono) after a BIOS set up text mode. UEFI firmware
 * leaves no text mode behind; the word is then something else. */
#define BDA_CRTC_PORT ((const volatile uint16_t *)0x463)

enum screen_kind {
    SCREEN_NONE,
    SCREEN_VGA_TEXT,
    SCREEN_FRAMEBUFFER,
};

static enum screen_kind screen = SCREEN_NONE;
static const char *screen_why = "the console is not set up yet";
/* The text grid as the person watching should see it, in VGA text cells
 * (attribute << 8 | character): copied to 0xB8000 in VGA text mode, drawn
 * by kernel/fbcon.c on a framebuffer. */
static uint16_t grid[ROWS * COLS];
static int row, col;

static uint16_t cell_of(char ch, uint8_t color) { return (uint16_t)((uint16_t)color << 8 | (uint8_t)ch); }

static void put_cell(int r, int c, char ch, uint8_t color)
{
    uint16_t v = cell_of(ch, color);
    grid[r * COLS + c] = v;
    if (screen == SCREEN_VGA_TEXT)
        VGA_TEXT[r * COLS + c] = v;
}

static void clear_rows(int from, int to, uint8_t color)
{
    for (int r = from; r < to; r++)
        for (int c = 0; c < COLS; c++)
            put_cell(r, c, ' ', color);
}

static bool vga_text_mode(void)
{
    /* The loader switched to graphics (its framebuffer is not EGA text):
     * the BIOS data area still says text, but nobody would see it. */
    if (fbcon_given() && fbcon_given_type() != BOOT_FB_EGA_TEXT)
        return false;
    uint16_t crtc = *BDA_CRTC_PORT;
    if (crtc == 0x3d4 || crtc == 0x3b4)
        return true;
    /* A loader that reports EGA text at the usual place (GRUB on a BIOS) */
    return fbcon_given() && fbcon_given_type() == BOOT_FB_EGA_TEXT && fbcon_given_addr() == 0xb8000;
}

bool vga_init(void)
{
    /* A framebuffer the loader set up wins: on a BIOS machine switched to
     * graphics, 0xB8000 would take text nobody sees. */
    const char *no_fb = fbcon_init(COLS, ROWS);
    if (!no_fb)
        screen = SCREEN_FRAMEBUFFER;
    else if (vga_text_mode())
        screen = SCREEN_VGA_TEXT;
    else {
        screen = SCREEN_NONE;
        screen_why = fbcon_given() ? no_fb : "no VGA text mode, and the boot loader set no graphics mode";
        return false;
    }
    screen_why = 0;
    clear_rows(0, ROWS, VGA_GREY);
    row = col = 0;
    if (screen == SCREEN_FRAMEBUFFER)
        fbcon_sync(grid);
    return true;
}

bool vga_present(void) { return screen == SCREEN_VGA_TEXT; }

const char *vga_screen_name(void)
{
    switch (screen) {
    case SCREEN_VGA_TEXT: return "vga-text";
    case SCREEN_FRAMEBUFFER: return "framebuffer";
    default: return "none";
    }
}

const char *vga_screen_why(void) { return screen_why; }

const char *vga_screen_access(void) { return screen == SCREEN_FRAMEBUFFER ? fbcon_access() : 0; }

const char *vga_screen_geometry(void)
{
    if (!fbcon_given() || fbcon_given_type() == BOOT_FB_EGA_TEXT)
        return 0;
    return fbcon_geometry();
}

static void scroll(void)
{
    memmove(grid, grid + COLS, (TEXT_ROWS - 1) * COLS * sizeof grid[0]);
    if (screen == SCREEN_VGA_TEXT)
        for (int i = 0; i < (TEXT_ROWS - 1) * COLS; i++)
            VGA_TEXT[i] = grid[i];
    clear_rows(TEXT_ROWS - 1, TEXT_ROWS, VGA_GREY);
    row = TEXT_ROWS - 1;
}

void vga_write(const char *s, size_t n, enum vga_color color)
{
    if (screen == SCREEN_NONE)
        return;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '\r')
            continue;
        if (ch == '\n' || col == COLS) {
            col = 0;
            if (++row == TEXT_ROWS)
                scroll();
            if (ch == '\n')
                continue;
        }
        put_cell(row, col++, ch, (uint8_t)color);
    }
    if (screen == SCREEN_FRAMEBUFFER)
        fbcon_sync(grid);
}

void vga_status(const char *s)
{
    if (screen == SCREEN_NONE)
        return;
    size_t n = strlen(s);
    for (int c = 0; c < COLS; c++)
        put_cell(ROWS - 1, c, (size_t)c < n ? s[c] : ' ', VGA_BAR);
    if (screen == SCREEN_FRAMEBUFFER)
        fbcon_sync(grid);
}

bool vga_on_framebuffer(void) { return screen == SCREEN_FRAMEBUFFER; }
