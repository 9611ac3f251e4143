/* glibc's own mutexes, the anchors bench smplocks measures beside its locks
 * (hosted only: they are NPTL's; Makefile HOSTED_ONLY_SRCS):
 *
 *   pthread_mutex     the default pthread_mutex_t: NPTL's 0/1/2 word, block
 *                     at once, wake one, no handoff
 *   pthread_adaptive  PTHREAD_MUTEX_ADAPTIVE_NP, glibc's spin-then-block:
 *                     tries up to glibc.pthread.mutex_spin_count times (100,
 *                     trimmed by a per-mutex average of past spins), with
 *                     pause, then blocks as the default one does
 *
 * The kernel has no C library: its sets simply do not list them
 * (bench/smplocks.c). */
#ifndef BENCH_GLIBCLOCKS_H
#define BENCH_GLIBCLOCKS_H

#include <stdint.h>

enum glibclock_kind { GLIBCLOCK_DEFAULT, GLIBCLOCK_ADAPTIVE };

/* A pthread_mutex_t (24 bytes on i386), opaque to the code that includes
 * this, alone on its cache line. */
struct glibclock {
    uint32_t mutex[16];
} __attribute__((aligned(64)));

void glibclock_init(struct glibclock *l, enum glibclock_kind kind);
void glibclock_acquire(struct glibclock *l);
void glibclock_release(struct glibclock *l);

#endif
