/* A raw DEFLATE encoder (RFC 1951, no zlib or gzip wrapper): one final block
 * of fixed Huffman codes (BTYPE 01), matches found by LZ77 over a 32 KiB
 * window with a hash of three bytes and a short chain (DEFLATE_CHAIN tries
 * per position, greedy). Any inflater reads it (the host: Python's zlib with
 * wbits=-15). Record lines compress about 4-6x this way: JSON keys repeat.
 *
 * No allocation: the caller provides the work area (about 192 KiB, so not
 * on the stack) and an output of deflate_bound(len) bytes. Portable C. */
#ifndef LIB_DEFLATE_H
#define LIB_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#define DEFLATE_WINDOW 32768
#define DEFLATE_HASH_BITS 15
#define DEFLATE_CHAIN 32

struct deflate_work {
    uint32_t head[1u << DEFLATE_HASH_BITS]; /* last position + 1 with this hash, 0 = none */
    uint32_t prev[DEFLATE_WINDOW];          /* the position + 1 before, by position mod window */
};

/* The most bytes deflate_fixed writes for len input bytes (a literal costs
 * at most 9 bits). */
static inline size_t deflate_bound(size_t len) { return len + len / 8 + 8; }
/* Compresses in into out (at least deflate_bound(len) bytes); returns the
 * bytes written. */
size_t deflate_fixed(const uint8_t *in, size_t len, uint8_t *out, struct deflate_work *work);

#endif
