/* A copy of every record line in memory (from "@cr1 " through "\r\n", as
 * the serial port gets them), for the results' QR codes (kernel/qrshow.c):
 * on a PC without a serial port they are the only way out. The buffer is
 * taken once, before the hello record, unless qr=off; a log that outgrows
 * it keeps what fit and says it was cut. */
#ifndef KERNEL_RECORDLOG_H
#define KERNEL_RECORDLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/config.h"

#define RECORDLOG_MAX (2u << 20)  /* bytes; suite=quick writes about 300 KiB */
#define RECORDLOG_MIN (64u << 10) /* below this, memory is too short to bother */

/* Unless qr (the qr= value) is off, takes the buffer: call before the
 * first record. */
void recordlog_init(enum qr_mode qr);
/* The qr= value (enum qr_mode). */
enum qr_mode recordlog_qr_mode(void);
/* Appends record bytes (kernel/console.c's record sink). */
void recordlog_append(const char *s, size_t n);
/* The log so far; NULL when there is no buffer. */
const uint8_t *recordlog_data(size_t *len);
/* Whether bytes were dropped because the buffer was full. */
bool recordlog_cut(void);

#endif
