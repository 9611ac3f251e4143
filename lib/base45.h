/* Base45 (RFC 9285): bytes as characters of the QR alphanumeric set, two
 * bytes to three characters (least significant first), a last odd byte to
 * two. Portable C: tests/unit checks it against the RFC's examples. */
#ifndef LIB_BASE45_H
#define LIB_BASE45_H

#include <stddef.h>
#include <stdint.h>

/* Characters base45_encode writes for len bytes. */
static inline size_t base45_length(size_t len) { return len / 2 * 3 + (len % 2) * 2; }
/* Writes base45_length(len) characters to out (no terminating NUL). */
size_t base45_encode(const uint8_t *in, size_t len, char *out);

#endif
