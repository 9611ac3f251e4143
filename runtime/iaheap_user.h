/* IAmalloc (Zhang & Chen, PATHREADS section 4.2), the ring-3 heap in the
 * shared region: the heap is cut into sub-heaps, one per thread (by id), and
 * a thread allocates from its own without any lock; any thread may free any
 * object, which goes back to the sub-heap it came from (its owner's
 * remote-free list, pushed with cmpxchg, drained by the owner when its own
 * list runs dry). Objects are padded to whole cache lines (64 bytes) so two
 * threads' objects never share a line. Inside a sub-heap: size classes of
 * 64 to 4096 bytes, each 4 KiB page holding one class (BiBOP, as Sheriff's
 * heap), the class of each page in a table.
 *
 * For comparison, one heap for every thread behind one futex mutex
 * (ia_shared_malloc/free): what a classic allocator in one shared address
 * space does. Call ia_init once, from the first thread, before either. */
#ifndef RUNTIME_IAHEAP_USER_H
#define RUNTIME_IAHEAP_USER_H

#include <stdint.h>

#include "runtime/uabi.h"

#define IA_SUBHEAPS 4
#define IA_CLASSES 7 /* 64 << 0 .. 64 << 6 */
#define IA_MIN_OBJECT 64u
#define IA_MAX_OBJECT (IA_MIN_OBJECT << (IA_CLASSES - 1))

struct ia_sub {
    uint32_t lo, hi, bump;       /* its pages [lo, hi); pages below bump are carved */
    uint32_t free[IA_CLASSES];   /* local free lists (link in an object's first word) */
    volatile uint32_t remote;    /* objects other threads freed, to be drained */
    uint32_t allocs, frees, remote_frees;
};

/* At U_HEAP: the sub-heaps (IA_SUBHEAPS of them, then the shared one), the
 * class of every heap page, and the shared heap's lock. */
struct ia_meta {
    struct ia_sub subs[IA_SUBHEAPS + 1];
    struct umutex shared_lock;
    uint32_t pages;
    uint8_t page_class[U_HEAP_MAX_PAGES];
};
#define IA_META ((struct ia_meta *)U_HEAP)
#define IA_SHARED IA_SUBHEAPS

/* Lays the heap out over U_CONTROL->heap_pages pages. */
void ia_init(void);
/* NULL when size is 0, above IA_MAX_OBJECT, or the sub-heap is full. */
void *ia_malloc(uint32_t size);
void ia_free(void *p);
void *ia_shared_malloc(uint32_t size);
void ia_shared_free(void *p);
/* The sub-heap an address lies in (IA_SHARED for the shared heap), or -1. */
int32_t ia_owner(uint32_t addr);

#endif
