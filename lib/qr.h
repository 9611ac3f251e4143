/* A QR code encoder (ISO/IEC 18004 model 2) for one purpose: a text of the
 * alphanumeric set ("0-9A-Z $%*+-./:") in a single alphanumeric segment at
 * error-correction level M, versions 1-40. Reed-Solomon over GF(256),
 * block interleaving, finder/timing/alignment patterns, format and version
 * information, and the mask with the lowest penalty of the eight.
 *
 * No allocation: the caller provides a struct qr_code (about 70 KiB, so not
 * on the stack). Portable C: tests/unit builds it for the host. */
#ifndef LIB_QR_H
#define LIB_QR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QR_VERSION_MAX 40
#define QR_SIZE_MAX (4 * QR_VERSION_MAX + 17)
#define QR_CODEWORDS_MAX 3706 /* version 40: data and error correction */
#define QR_QUIET_ZONE 4       /* light modules the standard asks for around a code */

struct qr_code {
    int version;
    int size; /* modules per side: 4 * version + 17 */
    int mask; /* the mask pattern chosen, 0-7 */
    uint8_t dark[QR_SIZE_MAX * QR_SIZE_MAX];     /* row-major, 1 = dark */
    uint8_t function[QR_SIZE_MAX * QR_SIZE_MAX]; /* 1 = a pattern module, not data */
    uint8_t data[QR_CODEWORDS_MAX];
    uint8_t stream[QR_CODEWORDS_MAX];            /* blocks interleaved, EC after data */
};

/* Modules per side of a version. */
static inline int qr_size(int version) { return 4 * version + 17; }
/* Whether c is one of the 45 characters of alphanumeric mode. */
bool qr_is_alnum(char c);
/* How many alphanumeric characters a version holds at level M. */
size_t qr_alnum_capacity(int version);
/* The smallest version (<= max_version) that holds len characters, or 0. */
int qr_fit_version(size_t len, int max_version);
/* Encodes text (qr_is_alnum characters only) at the given version; false when
 * it does not fit or a character is outside the set. */
bool qr_encode_alnum(struct qr_code *qr, const char *text, size_t len, int version);
static inline bool qr_module(const struct qr_code *qr, int x, int y) { return qr->dark[y * qr->size + x] != 0; }

/* Reed-Solomon error-correction codewords of one block (exposed for tests):
 * ec_len bytes of the remainder of data * x^ec_len divided by the generator
 * polynomial prod (x - 2^i), i < ec_len, in GF(256) modulo x^8+x^4+x^3+x^2+1. */
void qr_reed_solomon(const uint8_t *data, size_t len, uint8_t *ec, int ec_len);

#endif
