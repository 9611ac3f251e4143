/* Blocking synchronisation for fibers on one CPU. A waiter joins a FIFO
 * queue and blocks; the run queue switches away; release hands over to the
 * first waiter (so the mutex and the semaphore are FIFO). With cooperative
 * fibers "check, join the queue, block" cannot be interleaved, so no
 * wake-up is ever lost.
 *
 * spinblock is the LiteThreads mutex (Liu & Doemer 2012): lock spins
 * lock_loops times trying to take it before blocking; unlock releases and
 * spins unlock_loops times waiting for a taker before it wakes a waiter. */
#ifndef RUNTIME_SYNC_H
#define RUNTIME_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/fiber.h"

struct fmutex {
    bool locked;
    struct fiber *owner;
    struct fiber_queue waiters;
};

struct fsem {
    uint32_t count;
    struct fiber_queue waiters;
};

struct fcond {
    struct fiber_queue waiters;
};

struct fbarrier {
    uint32_t n, arrived, generation;
    struct fiber_queue waiters;
};

struct spinblock {
    volatile uint32_t word; /* 1 = held */
    uint32_t lock_loops, unlock_loops;
    struct fiber_queue waiters;
    uint32_t handoffs;      /* unlocks that woke a waiter */
};

void fmutex_init(struct fmutex *m);
void fmutex_lock(struct fmutex *m);
void fmutex_unlock(struct fmutex *m);

void fsem_init(struct fsem *s, uint32_t count);
void fsem_wait(struct fsem *s);
void fsem_post(struct fsem *s);

void fcond_init(struct fcond *c);
/* Releases m, waits for a signal, takes m again. */
void fcond_wait(struct fcond *c, struct fmutex *m);
void fcond_wait_spinblock(struct fcond *c, struct spinblock *m);
void fcond_signal(struct fcond *c);
void fcond_broadcast(struct fcond *c);

void fbarrier_init(struct fbarrier *b, uint32_t n);
/* Returns true in exactly one of the n fibers of each generation (the last). */
bool fbarrier_wait(struct fbarrier *b);

void spinblock_init(struct spinblock *m, uint32_t lock_loops, uint32_t unlock_loops);
void spinblock_lock(struct spinblock *m);
void spinblock_unlock(struct spinblock *m);

#endif
