#include "kernel/vgagfx.h"

#include "arch/x86.h"

enum {
    MISC_WRITE = 0x3c2, SEQ_INDEX = 0x3c4, SEQ_DATA = 0x3c5, DAC_WRITE_INDEX = 0x3c8, DAC_DATA = 0x3c9,
    GC_INDEX = 0x3ce, GC_DATA = 0x3cf, CRTC_INDEX = 0x3d4, CRTC_DATA = 0x3d5, AC_WRITE = 0x3c0,
    STATUS_1 = 0x3da, /* reading it resets the attribute controller's index/data flip-flop */
};

#define PLANES ((volatile uint8_t *)0xa0000)
#define ROW_BYTES (VGAGFX_WIDTH / 8)

/* Mode 12h as the VGA BIOS sets it (IBM's register tables, as in Chris
 * Giese's modes.c and the OSDev wiki): 25 MHz dot clock, 480 lines at
 * 60 Hz, 80 bytes a line in each plane, graphics at 0xA0000 (64 KiB). */
static const uint8_t misc = 0xe3;
static const uint8_t seq[5] = { 0x03, 0x01, 0x0f, 0x00, 0x06 };
static const uint8_t crtc[25] = {
    0x5f, 0x4f, 0x50, 0x82, 0x54, 0x80, 0x0b, 0x3e, 0x00, 0x40, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0xea, 0x0c, 0xdf, 0x28, 0x00, 0xe7, 0x04, 0xe3, 0xff,
};
static const uint8_t gc[9] = { 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0x0f, 0xff };
static const uint8_t ac[21] = {
    0x00, 0x01, 0x02, 0x14, 0x04, 0x05, 0x14, 0x07, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
    0x01, 0x00, 0x0f, 0x00, 0x00,
};

static void put(uint16_t index_port, uint8_t index, uint8_t value)
{
    outb(index_port, index);
    outb((uint16_t)(index_port + 1), value);
}

void vgagfx_init(void)
{
    put(SEQ_INDEX, 0, 0x01); /* synchronous reset while the clock changes */
    outb(MISC_WRITE, misc);  /* also moves the CRTC to 0x3D4 on a monochrome setup */
    for (uint8_t i = 1; i < sizeof seq; i++)
        put(SEQ_INDEX, i, seq[i]);
    put(SEQ_INDEX, 0, seq[0]);
    /* CRTC registers 0-7 are write-protected by bit 7 of register 0x11 */
    outb(CRTC_INDEX, 0x11);
    outb(CRTC_DATA, inb(CRTC_DATA) & 0x7f);
    for (uint8_t i = 0; i < sizeof crtc; i++)
        put(CRTC_INDEX, i, i == 0x11 ? crtc[i] & 0x7f : crtc[i]);
    for (uint8_t i = 0; i < sizeof gc; i++)
        put(GC_INDEX, i, gc[i]);
    for (uint8_t i = 0; i < sizeof ac; i++) {
        (void)inb(STATUS_1);
        outb(AC_WRITE, i);
        outb(AC_WRITE, ac[i]);
    }
    (void)inb(STATUS_1);
    outb(AC_WRITE, 0x20); /* palette access off: the screen shows again */
    /* Colour 0 (DAC 0) black and colour 15 (DAC 0x3F through the palette above) white,
     * whatever the text mode left there. */
    static const uint8_t dac[2][4] = { { 0x00, 0, 0, 0 }, { 0x3f, 63, 63, 63 } };
    for (int i = 0; i < 2; i++) {
        outb(DAC_WRITE_INDEX, dac[i][0]);
        for (int c = 1; c < 4; c++)
            outb(DAC_DATA, dac[i][c]);
    }
    for (uint32_t i = 0; i < ROW_BYTES * VGAGFX_HEIGHT; i++)
        PLANES[i] = 0;
}

void vgagfx_show(const uint8_t *bits)
{
    /* Write mode 0, every plane (map mask 0x0F), every bit (bit mask 0xFF): a byte written
     * lands in all four planes, so a set bit is colour 15 and a clear one colour 0. */
    for (uint32_t i = 0; i < ROW_BYTES * VGAGFX_HEIGHT; i++)
        PLANES[i] = bits[i];
}
