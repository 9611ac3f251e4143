/* After the done record: the whole record log (kernel/recordlog.c) as
 * numbered QR codes on the screen, for a PC whose records no serial port
 * carried (qr=auto), or always (qr=on). The log is DEFLATE-compressed
 * (lib/deflate.c), cut into chunks, and each chunk goes into one code as
 *     CR1/i/n/len(L)/CRC32(L)/CRC32(chunk)/BASE45(chunk)
 * (docs/QR.md). The codes are sized for a phone's camera, not for the
 * screen: several small codes a screen in a grid, one caption naming them,
 * on the framebuffer the loader set up or, on a screen in VGA text mode,
 * in VGA graphics mode 12h (640x480, kernel/vgagfx.c). The next screen
 * comes on a key press (i8042, polled) or after QRSHOW_PAGE_SECONDS,
 * whichever is first; after the last, the first again, for ever. */
#ifndef KERNEL_QRSHOW_H
#define KERNEL_QRSHOW_H

/* What a hand-held photo of the whole screen reads (docs/QR.md, measured with
 * tests/photosim.py): modules no smaller than the screen's width over
 * QRSHOW_SCREEN_MODULES, codes no larger than version QRSHOW_VERSION_MAX. */
#define QRSHOW_SCREEN_MODULES 220
#define QRSHOW_VERSION_MAX 12
#define QRSHOW_PAGE_SECONDS 8 /* a screen stays this long without a key press */
#define QRSHOW_PAGE_POLLS (QRSHOW_PAGE_SECONDS * 1000000u) /* ...in status-port reads (~1 us) without tsc.hz */
#define QRSHOW_NAP_TICKS 1000000u /* the APIC timer's ticks a halt between two polls lasts at most */

/* Shows the codes and never returns when this run should (qr=, a halting
 * exit, a screen); returns at once otherwise, having said on screen why not
 * when qr=on asked for them. Call after the done record, paging off. */
void qrshow_results(void);

#endif
