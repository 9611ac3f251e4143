/* Threads in ring 3, each in an address space of its own (PATHREADS,
 * Zhang & Chen; processes-as-threads, Liu 2014) or several in one (the
 * pthreads comparison). A "world" is one run of such threads: the kernel
 * makes it (uworld_init), gives it address spaces and first threads, runs
 * it until every thread has ended (uworld_run), and takes it down
 * (uworld_end). Threads enter the kernel only by system calls (int 0x80 or
 * sysenter, runtime/uabi.h) and by faults; interrupts stay off, so a thread
 * runs until it blocks, yields or ends, and runs repeat exactly.
 *
 * One ring-0 stack serves every thread: a switch saves the running
 * thread's trapframe in its record and puts the next one's in its place,
 * loading CR3 when the next thread lives in another address space.
 *
 * A ring-3 thread that touches what it may not (kernel memory, a read-only
 * page, the guard below its stack) or executes what it may not is stopped:
 * a `thread_fault` record names it, joiners get UTHREAD_FAULTED, and the
 * other threads go on. */
#ifndef RUNTIME_UTHREAD_H
#define RUNTIME_UTHREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/aspace.h"

#define UT_MAX 64
#define UT_MARKS 32
#define UT_POOL_DEFAULT 1024 /* frames: 4 MiB */

enum uentry { UENTRY_INT80, UENTRY_SYSENTER };

struct uworld_config {
    uint32_t heap_pages;   /* pages of the shared heap (at most U_HEAP_MAX_PAGES) */
    bool commit_mode;      /* Sheriff/Dthreads isolation: twins, and commits at synchronisation */
    bool isolated;         /* USYS_CREATE gives the child an address space of its own */
    enum uentry entry;     /* how the ring-3 library enters the kernel */
    bool global_pages;     /* kernel pages global (CR4.PGE) while it runs, where PGE exists */
    uint32_t pool_frames;  /* 0: UT_POOL_DEFAULT */
};

/* A timing mark (USYS_MARK): the TSC, the frames in use, who made it. */
struct umark {
    uint64_t tsc;
    uint32_t frames;
    uint32_t tid;
};

struct uworld_stats {
    uint32_t syscalls, switches, cr3_loads, creates, exits;
    uint32_t thread_faults, demand_faults, wp_fixes, twins, commits;
    uint32_t frames_leaked; /* frames still out after uworld_end: 0 */
};

/* NULL when threads can run now, else why not (paging off, ...). */
const char *uworld_unavailable(void);
/* sysenter exists (SEP, and not the early Pentium Pro that reports it). */
bool uentry_sysenter_ok(void);
const char *uentry_name(enum uentry e);

/* Frame pool, shared region and control page. The caller holds a memory
 * mark (kernel/memory.h) and releases it after uworld_end. */
bool uworld_init(const struct uworld_config *cfg);
/* A new address space in the world's mode (a private view in commit mode). */
struct aspace *uworld_space(void);
/* A thread in as, starting at fn(arg) (ring-3 code) on a fresh stack slot:
 * its id, or 0 when out of threads or frames. */
uint32_t uworld_spawn(struct aspace *as, void (*fn)(void *), void *arg);
/* Runs the threads until none is left; false when they deadlocked (an
 * `error` record says so). */
bool uworld_run(void);
/* Every space, frame and the shared region given back. */
void uworld_end(void);

const struct uworld_stats *uworld_stats(void);
uint32_t uworld_marks(const struct umark **marks);
/* A thread's exit status (UTHREAD_FAULTED when stopped), while its record lasts. */
uint32_t uworld_status(uint32_t tid);
/* Where the kernel reads and writes the programs' shared data (U_GLOBALS...). */
static inline void *uworld_shared(uint32_t va) { return shared_region_kernel(va); }

#endif
