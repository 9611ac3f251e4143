/* Locks between CPUs (runtime/spinlock.h and sync.h are for the fibers of
 * one CPU: their waits yield to the one scheduler, which another CPU must
 * never touch). Every call names the calling CPU (0 .. smp_cpus()-1, as
 * bench/parallel.h's worker index): the queue lock and the parked waiters
 * use a node of that CPU's own, on a cache line of its own.
 *
 *   tas       xchg until it returns 0
 *   ttas      read until free, then xchg
 *   ticket    lock xadd a ticket, wait until it is served (FIFO)
 *   mcs       Mellor-Crummey & Scott: a queue of waiters, each spinning on
 *             its own node's flag; release hands over to the next (FIFO)
 *   spinblock_handoff, spinblock_barge, spinblock_starve
 *             LiteThreads' mutex for CPUs, one guard and FIFO of parked
 *             waiters, three release rules. Lock spins lock_loops pauses,
 *             looking at the word after 1, 2, 4, ... up to
 *             CR_DEF_SMPLOCKS_BACKOFF_MAX of them (with jitter, as glibc's
 *             adaptive mutex: waiters that all look at every pause take the
 *             line from the holder), then parks in the FIFO. Unlock frees the word;
 *             only when someone is parked (a bit in the word says so) it
 *             spins unlock_loops times for a taker and, if none came,
 *             - handoff: takes the word back and hands the lock to the
 *               first parked waiter, asleep: the lock stays held through
 *               a whole wake-up on every such release (a lock convoy);
 *             - barge: wakes the first parked waiter, who competes like
 *               anyone (LiteThreads: "any thread could enter"); the word
 *               stays free meanwhile, and until that waiter has looked at
 *               it no release wakes another (WAKING: Go's mutexWoken);
 *             - starve: barge, but hands off to a first waiter parked for
 *               more than CR_DEF_SMPLOCKS_STARVE_US (Go's sync.Mutex
 *               starvation mode, WebKit's fair unlock).
 *             Blocking is kernel/park.h: parking on the waiter's own word
 *             in the kernel (nothing else could run on that CPU), a futex
 *             in the hosted build.
 *   mutex     NPTL's algorithm (Drepper's "mutex2"): one word, 0 free, 1
 *             held, 2 held with waiters; a waiter blocks on the word itself
 *             and unlock wakes one, who must then take it like anyone else
 *             (no handoff: a running CPU may take it first)
 *
 * tas, ttas, ticket and mcs wait with or without `pause`; the spinblocks
 * always pause; mutex blocks as they do (kernel/park.h). smpcond is a
 * condition variable on top of any of them (its waiters block as the
 * spinblocks' do); smprw a reader-writer spinlock (the model of Linux's
 * mmap_sem: faults read, mmap/munmap write). */
#ifndef RUNTIME_SMPLOCK_H
#define RUNTIME_SMPLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86.h"
#include "kernel/smp.h"

enum smplock_kind {
    SMPLOCK_TAS, SMPLOCK_TTAS, SMPLOCK_TICKET, SMPLOCK_MCS,
    SMPLOCK_SB_HANDOFF, SMPLOCK_SB_BARGE, SMPLOCK_SB_STARVE, /* the spin-then-block kinds, in this order */
    SMPLOCK_MUTEX, SMPLOCK_KINDS
};

static inline bool smplock_is_spinblock(enum smplock_kind k)
{
    return k >= SMPLOCK_SB_HANDOFF && k <= SMPLOCK_SB_STARVE;
}
/* Blocks (parks) when it waits long: the spinblocks and mutex. */
static inline bool smplock_blocks(enum smplock_kind k) { return k >= SMPLOCK_SB_HANDOFF; }

/* A parked node's wait word: 0 while parked, then why it was woken. */
enum { SMPLOCK_PARKED, SMPLOCK_WOKEN, SMPLOCK_OWNER };

/* One CPU's place in a lock's queue. */
struct smplock_node {
    struct smplock_node *volatile next;
    volatile uint32_t wait; /* mcs: 1 while waiting; spinblock/smpcond: SMPLOCK_PARKED while parked */
    uint64_t since;         /* spinblock: TSC when this acquisition first parked */
} __attribute__((aligned(64)));

/* FIFO of parked CPUs, behind a small test-and-set guard. */
struct smp_waitq {
    volatile uint32_t guard;
    struct smplock_node *head, *tail;
};

/* The spinblocks' word: HELD, HAS_PARKED while their FIFO is not empty,
 * and WAKING while a waiter woken to compete has not yet looked at the word
 * again (barge and starve: no release wakes another meanwhile). */
#define SMPLOCK_HELD 1u
#define SMPLOCK_HAS_PARKED 2u
#define SMPLOCK_WAKING 4u

struct smplock {
    volatile uint32_t word;        /* tas, ttas: 1 = held; spinblocks: SMPLOCK_HELD, _HAS_PARKED, _WAKING; mutex: 0, 1, 2 */
    volatile uint32_t next, owner; /* ticket */
    struct smplock_node *volatile tail; /* mcs */
    enum smplock_kind kind;
    bool use_pause;
    uint32_t lock_loops, unlock_loops; /* spinblock */
    uint64_t handoff_after; /* spinblock: TSC ticks a first waiter must have parked to be handed the lock */
    struct smp_waitq waiters __attribute__((aligned(64)));
    volatile uint32_t handoffs; /* spinblock: unlocks that handed the lock to a parked waiter */
    volatile uint32_t wakes;    /* spinblock: unlocks that woke a parked waiter to compete */
    volatile uint32_t parks;    /* spinblock, mutex: times a lock call parked */
    struct smplock_node nodes[SMP_MAX_CPUS];
};

void smplock_init(struct smplock *l, enum smplock_kind kind, bool use_pause);
/* The spinblocks' knobs (LiteThreads' lock_loops, unlock_loops). */
void smplock_set_loops(struct smplock *l, uint32_t lock_loops, uint32_t unlock_loops);
void smplock_acquire(struct smplock *l, uint32_t cpu);
void smplock_release(struct smplock *l, uint32_t cpu);
/* "tas", "tas_pause", ..., "mcs_pause", "spinblock_handoff", "spinblock_barge", "spinblock_starve",
 * "mutex": bench smplocks' names. */
const char *smplock_name(enum smplock_kind kind, bool use_pause);

/* One turn of a wait on l: `pause` if its waiters pause, else a plain loop turn. */
static inline void smplock_spin_turn(const struct smplock *l)
{
    if (l->use_pause)
        cpu_pause();
    else
        busy_turn();
}

struct smpcond {
    struct smp_waitq waiters;
    struct smplock_node nodes[SMP_MAX_CPUS];
};

void smpcond_init(struct smpcond *c);
/* Releases m, blocks until signalled, takes m again. */
void smpcond_wait(struct smpcond *c, struct smplock *m, uint32_t cpu);
/* Wakes the longest waiter, if any (call with the lock held). */
void smpcond_signal(struct smpcond *c);

struct smprw {
    volatile uint32_t word; /* SMPRW_WRITER, or the count of readers */
};
#define SMPRW_WRITER 0x80000000u

static inline void smprw_init(struct smprw *l) { l->word = 0; }
void smprw_read_lock(struct smprw *l);
void smprw_read_unlock(struct smprw *l);
void smprw_write_lock(struct smprw *l);
void smprw_write_unlock(struct smprw *l);

#endif
