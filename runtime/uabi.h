/* The contract between the kernel and ring-3 threads (PATHREADS-style
 * isolated address spaces, Sheriff/Dthreads commit mode): where things lie
 * in every thread's address space, the system call numbers, and the
 * structures both sides read and write. Included by the kernel
 * (runtime/uthread.c and friends) and by ring-3 code (*_user.c).
 *
 * Every address space maps, above U_WINDOW, three kinds of region:
 *   shared   one page table for sync page, globals and heap: the same
 *            physical frames in every thread (direct mode), or read-only
 *            views of them plus private working copies (commit mode);
 *   private  benchmark buffers, demand-zero and fix-on-write test pages,
 *            map/unmap targets: this address space's own;
 *   stack    the threads' stacks: slot 0 at the same address in every
 *            isolated space; threads sharing one space take slots 1, 2...
 * Below U_WINDOW the kernel's identity map is copied, supervisor-only
 * except the ring-3 code pages (linker.ld's .utext). */
#ifndef RUNTIME_UABI_H
#define RUNTIME_UABI_H

#include <stdint.h>

#define U_PAGE 4096u
#define U_WINDOW 0xf0000000u /* RAM above this is not identity-mapped: no PC has any there */

/* The shared table: one 4 MiB page table. */
#define U_SHARED U_WINDOW
#define U_SYNC U_SHARED /* always shared directly, in commit mode too: the synchronisation words */
#define U_SYNC_PAGES 1u
#define U_GLOBALS (U_SYNC + U_SYNC_PAGES * U_PAGE)
#define U_GLOBALS_PAGES 7u
#define U_HEAP (U_GLOBALS + U_GLOBALS_PAGES * U_PAGE)
#define U_HEAP_MAX_PAGES 248u
#define U_SHARED_MAX_PAGES (U_SYNC_PAGES + U_GLOBALS_PAGES + U_HEAP_MAX_PAGES)

/* Private: up to the stacks. */
#define U_PRIVATE 0xf0400000u
#define U_PRIVATE_END 0xff000000u

/* Stacks: one 4 MiB table; slot k's stack ends at U_STACK_TOP - k * U_STACK_SLOT,
 * with an unmapped guard page below each. */
#define U_STACK_REGION 0xff000000u
#define U_STACK_TOP 0xff400000u
#define U_STACK_PAGES 4u
#define U_STACK_SLOT ((U_STACK_PAGES + 1) * U_PAGE)
#define U_STACK_SLOTS 64u

/* The kernel writes this at U_SYNC before a world runs. */
struct ucontrol {
    uint32_t use_sysenter; /* the library's system calls enter by sysenter, else int 0x80 */
    uint32_t commit_mode;  /* 1: Dthreads/Sheriff isolation: commit at every synchronisation */
    uint32_t heap_pages;   /* pages of the shared heap at U_HEAP */
    uint32_t reserved;
};
#define U_CONTROL ((volatile struct ucontrol *)U_SYNC)
/* The rest of the sync page holds the programs' mutexes, condition
 * variables and barriers (struct usync_area). */
#define U_SYNC_AREA (U_SYNC + 64u)

/* Each thread's block: the top 16 bytes of its stack slot. The kernel
 * writes it when the thread is made; ring-3 code finds it from ESP (a
 * private page per isolated space would do too, but threads sharing one
 * space have only their stacks to tell them apart). */
struct uself {
    uint32_t tid;
    uint32_t subheap; /* IAmalloc: the sub-heap this thread allocates from */
    uint32_t slot;
    uint32_t reserved;
};

/* Synchronisation words, in the sync page. */
struct umutex {
    volatile uint32_t state; /* 0 free, 1 held, 2 held and maybe waiters (Drepper's "mutex2") */
};
struct ucond {
    volatile uint32_t seq; /* bumped by every signal and broadcast */
};
struct ubarrier {
    volatile uint32_t count, arrived, generation;
};

/* System calls: EAX = number, EBX, ESI, EDI = arguments, EAX = result.
 * In commit mode the ones marked (sync) commit the caller's changes first. */
enum usys {
    USYS_NULL,           /* returns USYS_NULL_MAGIC: the round trip alone */
    USYS_MARK,           /* the kernel notes the TSC (timing marks of the benchmarks) */
    USYS_YIELD,          /* to the back of the run queue */
    USYS_CREATE,         /* (fn, arg) (sync): isolated: fork-like, the child resumes here with 0 on a copy
                          * of the caller's stack; shared: clone-like, the child starts in fn(arg).
                          * Returns the child's id */
    USYS_EXIT,           /* (status) (sync) */
    USYS_JOIN,           /* (tid) (sync): waits for its end, returns its status */
    USYS_FUTEX_WAIT,     /* (word, value): blocks while *word == value; 1 if it did not block */
    USYS_FUTEX_WAKE,     /* (word, n): wakes up to n waiters, returns how many */
    USYS_COND_WAIT,      /* (cond, seq): blocks while cond->seq == seq */
    USYS_COND_SIGNAL,    /* (cond) (sync): bumps seq, wakes one */
    USYS_COND_BROADCAST, /* (cond) (sync): bumps seq, wakes all */
    USYS_BARRIER_WAIT,   /* (barrier) (sync): 1 in the last thread to arrive */
    USYS_MAP,            /* (va, pages): zeroed private pages, under the address-space lock */
    USYS_UNMAP,          /* (va, pages) */
    USYS_COMMIT,         /* (sync) alone: the mutex paths call it in commit mode */
    USYS_COUNT
};
#define USYS_NULL_MAGIC 0x600dca11u
#define USYS_ERROR 0xffffffffu /* bad number or argument: the call did nothing */
#define UTHREAD_FAULTED 0xfau  /* the status join returns for a thread stopped by a fault */

#endif
