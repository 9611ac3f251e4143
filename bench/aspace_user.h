/* The ring-3 bodies of bench aspace. Each thread gets a struct ab_thread
 * in the globals; the leader brackets the measured part with timing marks
 * (USYS_MARK): mark, mark, body, mark. The kernel takes the time between
 * the last two marks minus the time between the first two (one mark's own
 * round trip). Helpers do the body without marks. */
#ifndef BENCH_ASPACE_USER_H
#define BENCH_ASPACE_USER_H

#include <stdint.h>

#include "runtime/uabi.h"

struct ab_thread {
    uint32_t lead;  /* 1: this thread makes the marks */
    uint32_t reps;
    uint32_t va;    /* a private or shared region's first page */
    uint32_t pages;
    uint32_t size;  /* malloc: object size; workset: buffer size */
    uint32_t kind;  /* null: 1 = sysenter, 0 = int 0x80; malloc: 1 = shared heap; workset: fill= */
};

struct ab_globals {
    struct ab_thread t[2];
};
#define AB ((struct ab_globals *)U_GLOBALS)

/* The sync page: the benchmarks' mutex and barrier. */
struct ab_sync {
    struct umutex m;
    struct ubarrier b;
};
#define AB_SYNC ((struct ab_sync *)U_SYNC_AREA)

void ab_yield(void *t);         /* reps yields */
void ab_null(void *t);          /* reps null system calls, int 0x80 or sysenter */
void ab_create(void *t);        /* reps x create, exit, join */
void ab_mutex(void *t);         /* reps x lock, unlock */
void ab_mutex_pingpong(void *t); /* reps x lock, yield, unlock, yield */
void ab_malloc(void *t);        /* reps x malloc, free (sub-heap or shared heap) */
void ab_touch(void *t);         /* one write to each page, then the barrier */
void ab_map(void *t);           /* reps x map, unmap, then the barrier */
void ab_workset(void *t);       /* reps x refill the buffer, yield */

#endif
