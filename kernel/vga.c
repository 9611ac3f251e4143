#include "kernel/vga.h"

#include "kernel/string.h"

#define VGA_TEXT ((volatile uint16_t *)0xb8000)
#define COLS VGA_COLUMNS
#define ROWS 25
#define TEXT_ROWS (ROWS - 1) /* the last row is the status line */

/* The BIOS data area word at 0x463 holds the CRT controller's port: 0x3D4
 * (colour) or 0x3B4 (mono) after a BIOS set up text mode. UEFI firmware
 * leaves no text mode behind; the word is then something else. */
#define BDA_CRTC_PORT ((const volatile uint16_t *)0x463)

static bool present;
static int row, col;

static void put_cell(int r, int c, char ch, uint8_t color)
{
    VGA_TEXT[r * COLS + c] = (uint16_t)((uint16_t)color << 8 | (uint8_t)ch);
}

static void clear_rows(int from, int to, uint8_t color)
{
    for (int r = from; r < to; r++)
        for (int c = 0; c < COLS; c++)
            put_cell(r, c, ' ', color);
}

bool vga_init(void)
{
    uint16_t crtc = *BDA_CRTC_PORT;
    present = crtc == 0x3d4 || crtc == 0x3b4;
    if (!present)
        return false;
    clear_rows(0, ROWS, VGA_GREY);
    row = col = 0;
    return true;
}

bool vga_present(void) { return present; }

static void scroll(void)
{
    for (int i = 0; i < (TEXT_ROWS - 1) * COLS; i++)
        VGA_TEXT[i] = VGA_TEXT[i + COLS];
    clear_rows(TEXT_ROWS - 1, TEXT_ROWS, VGA_GREY);
    row = TEXT_ROWS - 1;
}

void vga_write(const char *s, size_t n, enum vga_color color)
{
    if (!present)
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
}

void vga_status(const char *s)
{
    if (!present)
        return;
    size_t n = strlen(s);
    for (int c = 0; c < COLS; c++)
        put_cell(ROWS - 1, c, (size_t)c < n ? s[c] : ' ', VGA_BAR);
}
