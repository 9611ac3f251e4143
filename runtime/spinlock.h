/* Spinlocks: test-and-set (xchg), test-and-test-and-set, and the FIFO
 * ticket lock (lock xadd), each with and without `pause` in its wait loop.
 * On one CPU with cooperative fibers a spinner can only wait for a holder
 * that yielded inside its critical section, so every wait loop also yields
 * (spin_wait_hook) rather than spin forever. */
#ifndef RUNTIME_SPINLOCK_H
#define RUNTIME_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86.h"

enum spin_kind { SPIN_TAS, SPIN_TTAS, SPIN_TICKET, SPIN_KINDS };

struct spinlock {
    volatile uint32_t word;   /* tas/ttas: 1 = held */
    volatile uint32_t next;   /* ticket: next ticket to hand out */
    volatile uint32_t owner;  /* ticket: ticket now served */
    enum spin_kind kind;
    bool use_pause;
};

void spin_init(struct spinlock *l, enum spin_kind kind, bool use_pause);
void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);
bool spin_trylock(struct spinlock *l);
/* "tas", "ttas_pause", ...: the case names of bench locks. */
const char *spin_name(enum spin_kind kind, bool use_pause);

#endif
