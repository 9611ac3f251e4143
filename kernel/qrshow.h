/* After the done record: the whole record log (kernel/recordlog.c) as
 * numbered QR codes on the screen, for a PC whose records no serial port
 * carried (qr=auto), or always (qr=on). The log is DEFLATE-compressed
 * (lib/deflate.c), cut into chunks, and each chunk goes into one code as
 *     CR1/i/n/len(L)/CRC32(L)/CRC32(chunk)/BASE45(chunk)
 * (docs/QR.md). One code per screen, the largest version that fits: on a
 * framebuffer with modules of at least 4 pixels and a 4-module quiet zone;
 * in VGA text mode two modules per character cell (half blocks). A key press
 * (i8042, polled) shows the next; without a keyboard controller every 3 s.
 * After the last, the first again, for ever. */
#ifndef KERNEL_QRSHOW_H
#define KERNEL_QRSHOW_H

#define QRSHOW_MODULE_PIXELS 4  /* framebuffer: the smallest module a camera resolves */
#define QRSHOW_VGA_QUIET 2      /* VGA text: light modules above and below (48 rows in all) */
#define QRSHOW_PAGE_SECONDS 3   /* without a keyboard: the time per page */
#define QRSHOW_PAGE_POLLS 3000000u /* ...when the TSC's frequency is unknown (~1 us per poll) */

/* Shows the codes and never returns when this run should (qr=, a halting
 * exit, a screen); returns at once otherwise, having said on screen why not
 * when qr=on asked for them. Call after the done record, paging off. */
void qrshow_results(void);

#endif
