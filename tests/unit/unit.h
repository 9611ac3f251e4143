/* A minimal check framework for the kernel's portable C, compiled for
 * Linux by the cross compiler (make units) and run by tests/test_units.py. */
#ifndef TESTS_UNIT_H
#define TESTS_UNIT_H

#include <stdio.h>
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

static inline int unit_finish(void)
{
    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}

#endif
