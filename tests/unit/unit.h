/* A minimal check framework for the kernel's portable C, compiled for
 * Linux by the cross compiler (make units) and run by tests/test_units.py. */
#ifndef TESTS_UNIT_H
#define TESTS_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            unit_passed++;                                                           \
        } else {                                                                     \
            unit_failed++;                                                           \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
        }                                                                            \
    } while (0)

#define CHECK_STR(got, want)                                                         \
    do {                                                                             \
        const char *g_ = (got), *w_ = (want);                                        \
        if (strcmp(g_, w_) == 0) {                                                   \
            unit_passed++;                                                           \
        } else {                                                                     \
            unit_failed++;                                                           \
            printf("FAIL %s:%d: got \"%s\" want \"%s\"\n", __FILE__, __LINE__, g_, w_); \
        }                                                                            \
    } while (0)

/* All of standard input, for the `stdin` modes that let host tests feed a
 * kernel encoder their own data; *len gets its length. */
static inline uint8_t *unit_read_stdin(size_t *len)
{
    size_t cap = 1 << 20, got;
    uint8_t *in = malloc(cap);
    *len = 0;
    while ((got = fread(in + *len, 1, cap - *len, stdin)) > 0) {
        *len += got;
        if (*len == cap)
            in = realloc(in, cap *= 2);
    }
    return in;
}

static inline int unit_finish(void)
{
    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}

#endif
