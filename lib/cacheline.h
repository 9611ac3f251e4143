/* How many cache lines a multi-CPU benchmark's words span: k workers, each
 * updating `words` 4-byte words of its own (worker w's i-th at byte
 * first + w * step + i * gap of a line-aligned area). A layout meant to put
 * every worker in one line holds 16 ints of a 64-byte line, so from the
 * 17th worker on it spans two: the records say so (params.lines) rather
 * than the name of the layout. */
#ifndef LIB_CACHELINE_H
#define LIB_CACHELINE_H

#include <stddef.h>
#include <stdint.h>

struct cacheline_layout {
    uint32_t first; /* byte offset of worker 0's first word */
    uint32_t step;  /* bytes from one worker's first word to the next's */
    uint32_t words; /* words per worker */
    uint32_t gap;   /* bytes from one of a worker's words to its next */
};

/* Lines of `line` bytes holding a byte of any of the k workers' words. */
uint32_t cacheline_count(const struct cacheline_layout *at, uint32_t k, uint32_t line);

/* Room for cacheline_addrs' text of k words: "0x", 8 hex digits and a comma each, and the end. */
#define CACHELINE_ADDRS_TEXT(k) ((k) * 11u + 1u)

/* The k workers' word addresses, as the CPUs used them, into out as
 * "0x80c1040,0x80c1044,..." (whole addresses only: cut short, never
 * overrun, when size is too small): what the host reads to see which words share a line, whatever
 * the layout and the area's alignment were meant to be. Returns the length. */
size_t cacheline_addrs(char *out, size_t size, const uint32_t *addrs, uint32_t k);

#endif
