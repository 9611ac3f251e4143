#include "runtime/smplock.h"

#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/park.h"
#include "lib/defaults.h"

#define UNKNOWN_HZ 1000000000ull /* the starve rule's clock where the TSC rate is unknown */

static const char *const names[SMPLOCK_KINDS][2] = {
    { "tas", "tas_pause" }, { "ttas", "ttas_pause" }, { "ticket", "ticket_pause" }, { "mcs", "mcs_pause" },
    { "spinblock_handoff", "spinblock_handoff" }, { "spinblock_barge", "spinblock_barge" },
    { "spinblock_starve", "spinblock_starve" }, { "mutex", "mutex" },
};

const char *smplock_name(enum smplock_kind kind, bool use_pause) { return names[kind][use_pause ? 1 : 0]; }

/* Ticks a first waiter must have parked before a release hands it the lock:
 * handoff at once, barge never, starve after CR_DEF_SMPLOCKS_STARVE_US. */
static uint64_t handoff_after(enum smplock_kind kind)
{
    if (kind == SMPLOCK_SB_HANDOFF)
        return 0;
    if (kind != SMPLOCK_SB_STARVE)
        return UINT64_MAX;
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : UNKNOWN_HZ;
    return hz / 1000000 * CR_DEF_SMPLOCKS_STARVE_US;
}

void smplock_init(struct smplock *l, enum smplock_kind kind, bool use_pause)
{
    l->word = l->next = l->owner = 0;
    l->tail = 0;
    l->kind = kind;
    l->use_pause = use_pause || smplock_blocks(kind);
    l->lock_loops = l->unlock_loops = 0;
    l->handoff_after = handoff_after(kind);
    l->waiters = (struct smp_waitq){ 0, 0, 0 };
    l->handoffs = l->wakes = l->parks = 0;
}

void smplock_set_loops(struct smplock *l, uint32_t lock_loops, uint32_t unlock_loops)
{
    l->lock_loops = lock_loops;
    l->unlock_loops = unlock_loops;
}

/* --- the parked waiters' queue ----------------------------------------------- */

static void guard_lock(struct smp_waitq *q)
{
    while (xchg32(&q->guard, 1))
        while (q->guard)
            cpu_pause();
}

static void guard_unlock(struct smp_waitq *q)
{
    compiler_barrier();
    q->guard = 0;
}

/* All three under the guard. */
static void enqueue(struct smp_waitq *q, struct smplock_node *n)
{
    n->next = 0;
    n->wait = SMPLOCK_PARKED;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
}

/* A woken waiter that lost the lock again keeps its place: first. */
static void enqueue_first(struct smp_waitq *q, struct smplock_node *n)
{
    n->wait = SMPLOCK_PARKED;
    n->next = q->head;
    q->head = n;
    if (!q->tail)
        q->tail = n;
}

static struct smplock_node *dequeue(struct smp_waitq *q)
{
    struct smplock_node *n = q->head;
    if (n) {
        q->head = n->next;
        if (!q->head)
            q->tail = 0;
    }
    return n;
}

static void unpark(struct smplock_node *n, uint32_t why)
{
    __atomic_store_n(&n->wait, why, __ATOMIC_RELEASE);
    park_wake(&n->wait);
}

/* --- the spinblocks ------------------------------------------------------------------ */

/* No wake-up is lost, because the word's HAS_PARKED bit and the FIFO change
 * together under the guard, and a waiter sets the bit only by a
 * compare-and-swap that also finds HELD:
 *  - a waiter queues only holding the guard, after it saw HELD|HAS_PARKED in
 *    one atomic step (its own CAS, or a read of a bit that only a dequeuer
 *    under the guard, which it holds, can clear);
 *  - so the holder it saw has not released yet at that moment, and its
 *    release's CAS HELD -> 0 fails on HAS_PARKED: it takes the slow path,
 *    whose guard_lock waits until the waiter is queued, and wakes (or hands
 *    the lock to) the first waiter, unless a taker holds the word by then:
 *    that taker's release finds HAS_PARKED in turn;
 *  - a woken waiter that loses to a barger queues again the same way.
 * Release's fast path takes no guard: nobody is parked.
 * WAKING (barge, starve) only spares wake-ups: a release that finds it
 * wakes nobody, because the woken waiter still has to look at the word, and
 * it clears the bit in the same compare-and-swap that takes the word or
 * marks a held one HAS_PARKED before it queues again (whose holder's
 * release then wakes someone). So while parked waiters exist and the word is
 * free, either a woken waiter is on its way or a release is about to wake one. */

/* Takes a free word, clearing `drop` (WAKING for the woken waiter); false if held. */
static bool sb_try(struct smplock *l, uint32_t drop)
{
    uint32_t w = l->word;
    while (!(w & SMPLOCK_HELD))
        if (__atomic_compare_exchange_n(&l->word, &w, (w | SMPLOCK_HELD) & ~drop, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

/* Under the guard: takes a free word (true), or marks a held one as having a
 * parked waiter (false: the caller queues); either way clears `drop`. */
static bool sb_take_or_mark(struct smplock *l, uint32_t drop)
{
    uint32_t w = l->word;
    for (;;) {
        uint32_t want = (w & SMPLOCK_HELD ? w | SMPLOCK_HAS_PARKED : w | SMPLOCK_HELD) & ~drop;
        if (w == want || __atomic_compare_exchange_n(&l->word, &w, want, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return !(w & SMPLOCK_HELD);
    }
}

/* The spin: lock_loops pauses in all, looking at the word after 1, 2, 4, ...
 * up to CR_DEF_SMPLOCKS_BACKOFF_MAX of them, each stretch longer by up to
 * its own length less one (the TSC's low bits), so that the waiters who saw
 * one release do not all look again at once. Looking at every pause, 16
 * waiters kept the line away from the holder: a lock+unlock cost 967 TSC
 * ticks at 16 CPUs against ttas_pause's 588 (16-core Intel Xeon guest,
 * 2026-11-27, lock_loops 10000, nothing parked). */
static bool sb_spin(struct smplock *l, uint32_t drop)
{
    uint32_t backoff = 1;
    for (uint32_t spun = 0; spun < l->lock_loops;) {
        uint32_t n = backoff + ((uint32_t)rdtsc() & (backoff - 1));
        if (n > l->lock_loops - spun)
            n = l->lock_loops - spun;
        spun += n;
        while (n--)
            cpu_pause();
        if (!(l->word & SMPLOCK_HELD) && sb_try(l, drop))
            return true;
        if (backoff < CR_DEF_SMPLOCKS_BACKOFF_MAX)
            backoff <<= 1;
    }
    return false;
}

static void spinblock_acquire(struct smplock *l, struct smplock_node *me)
{
    uint32_t w = 0;
    if (__atomic_compare_exchange_n(&l->word, &w, SMPLOCK_HELD, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) ||
        (!(w & SMPLOCK_HELD) && sb_try(l, 0))) /* free, with waiters parked: anyone may take it */
        return;
    /* drop: WAKING once woken to compete (the waker set it for us) */
    for (uint32_t drop = 0;; drop = SMPLOCK_WAKING) {
        if (sb_spin(l, drop))
            return;
        guard_lock(&l->waiters);
        if (sb_take_or_mark(l, drop)) {
            guard_unlock(&l->waiters);
            return;
        }
        if (drop) {
            enqueue_first(&l->waiters, me);
        } else {
            me->since = rdtsc();
            enqueue(&l->waiters, me);
        }
        l->parks = l->parks + 1;
        guard_unlock(&l->waiters);
        park_wait(&me->wait, SMPLOCK_PARKED);
        if (me->wait == SMPLOCK_OWNER) /* handed over: the release kept the word held for us */
            return;
    }
}

/* Under the guard, n first in the FIFO: whether this release hands n the lock. */
static bool hands_over(const struct smplock *l, const struct smplock_node *n)
{
    if (l->handoff_after == UINT64_MAX)
        return false;
    return l->handoff_after == 0 || rdtsc() - n->since >= l->handoff_after;
}

static void spinblock_release(struct smplock *l)
{
    uint32_t expect = SMPLOCK_HELD;
    if (__atomic_compare_exchange_n(&l->word, &expect, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return; /* nobody parked */
    if (__atomic_fetch_and(&l->word, ~SMPLOCK_HELD, __ATOMIC_RELEASE) & SMPLOCK_WAKING)
        return; /* a woken waiter is on its way */
    /* Wait for a spinning taker; with one, nobody needs waking now (its release will). */
    for (uint32_t i = 0; i < l->unlock_loops; i++) {
        cpu_pause();
        if (l->word & SMPLOCK_HELD)
            return;
    }
    guard_lock(&l->waiters);
    struct smplock_node *n = l->waiters.head;
    uint32_t why = SMPLOCK_WOKEN;
    if (n && hands_over(l, n)) {
        why = SMPLOCK_OWNER;
        if (!sb_try(l, 0)) /* a taker came meanwhile: its own release hands over */
            n = 0;
    } else if (l->word & SMPLOCK_WAKING) {
        n = 0; /* another release woke one since ours freed the word */
    }
    if (n) {
        dequeue(&l->waiters);
        uint32_t clear = l->waiters.head ? 0 : SMPLOCK_HAS_PARKED, set = why == SMPLOCK_WOKEN ? SMPLOCK_WAKING : 0;
        uint32_t w = l->word;
        while (!__atomic_compare_exchange_n(&l->word, &w, (w & ~clear) | set, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))
            ;
        if (why == SMPLOCK_OWNER)
            l->handoffs = l->handoffs + 1;
        else
            l->wakes = l->wakes + 1;
    }
    guard_unlock(&l->waiters);
    if (n)
        unpark(n, why);
}

/* --- mutex (NPTL's) ---------------------------------------------------------------- */

static void mutex_acquire(struct smplock *l)
{
    uint32_t c = cmpxchg32(&l->word, 0, 1);
    if (c == 0)
        return;
    if (c != 2)
        c = xchg32(&l->word, 2);
    while (c != 0) { /* held, and we say there are waiters */
        __atomic_add_fetch(&l->parks, 1, __ATOMIC_RELAXED);
        park_wait(&l->word, 2);
        c = xchg32(&l->word, 2);
    }
}

static void mutex_release(struct smplock *l)
{
    if (xchg32(&l->word, 0) == 2)
        park_wake(&l->word);
}

/* --- the lock ---------------------------------------------------------------------- */

void smplock_acquire(struct smplock *l, uint32_t cpu)
{
    struct smplock_node *me = &l->nodes[cpu];
    switch (l->kind) {
    case SMPLOCK_TAS:
        while (xchg32(&l->word, 1))
            smplock_spin_turn(l);
        break;
    case SMPLOCK_TTAS:
        for (;;) {
            while (l->word) /* read-only until it looks free */
                smplock_spin_turn(l);
            if (!xchg32(&l->word, 1))
                break;
        }
        break;
    case SMPLOCK_TICKET: {
        uint32_t ticket = xadd32(&l->next, 1);
        while (l->owner != ticket)
            smplock_spin_turn(l);
        break;
    }
    case SMPLOCK_MCS: {
        me->next = 0;
        me->wait = 1;
        struct smplock_node *pred = __atomic_exchange_n(&l->tail, me, __ATOMIC_ACQ_REL);
        if (pred) {
            pred->next = me;
            while (me->wait) /* our own line: no traffic until the predecessor writes it */
                smplock_spin_turn(l);
        }
        break;
    }
    case SMPLOCK_MUTEX:
        mutex_acquire(l);
        break;
    default: /* the spinblocks */
        spinblock_acquire(l, me);
        break;
    }
    compiler_barrier();
}

void smplock_release(struct smplock *l, uint32_t cpu)
{
    compiler_barrier();
    switch (l->kind) {
    case SMPLOCK_TAS:
    case SMPLOCK_TTAS:
        __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
        break;
    case SMPLOCK_TICKET:
        __atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
        break;
    case SMPLOCK_MCS: {
        struct smplock_node *me = &l->nodes[cpu];
        if (!me->next) {
            struct smplock_node *expect = me;
            if (__atomic_compare_exchange_n(&l->tail, &expect, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return;
            while (!me->next) /* a successor swapped the tail and is about to link itself */
                smplock_spin_turn(l);
        }
        __atomic_store_n(&me->next->wait, 0, __ATOMIC_RELEASE);
        break;
    }
    case SMPLOCK_MUTEX:
        mutex_release(l);
        break;
    default: /* the spinblocks */
        spinblock_release(l);
        break;
    }
}

/* --- condition variable ------------------------------------------------------------- */

void smpcond_init(struct smpcond *c) { c->waiters = (struct smp_waitq){ 0, 0, 0 }; }

void smpcond_wait(struct smpcond *c, struct smplock *m, uint32_t cpu)
{
    struct smplock_node *me = &c->nodes[cpu];
    /* queued before m is released: a signaller (who holds m) sees us */
    guard_lock(&c->waiters);
    enqueue(&c->waiters, me);
    guard_unlock(&c->waiters);
    smplock_release(m, cpu);
    park_wait(&me->wait, SMPLOCK_PARKED);
    smplock_acquire(m, cpu);
}

void smpcond_signal(struct smpcond *c)
{
    guard_lock(&c->waiters);
    struct smplock_node *n = dequeue(&c->waiters);
    guard_unlock(&c->waiters);
    if (n)
        unpark(n, SMPLOCK_WOKEN);
}

/* --- reader-writer spinlock ------------------------------------------------------------ */

void smprw_read_lock(struct smprw *l)
{
    for (;;) {
        if (!(xadd32(&l->word, 1) & SMPRW_WRITER))
            return;
        xadd32(&l->word, (uint32_t)-1); /* a writer holds it: step back and wait */
        while (l->word & SMPRW_WRITER)
            cpu_pause();
    }
}

void smprw_read_unlock(struct smprw *l) { xadd32(&l->word, (uint32_t)-1); }

void smprw_write_lock(struct smprw *l)
{
    while (cmpxchg32(&l->word, 0, SMPRW_WRITER) != 0)
        while (l->word)
            cpu_pause();
}

/* Readers may have counted themselves in meanwhile (and are stepping back):
 * take the writer bit away, not the whole word. */
void smprw_write_unlock(struct smprw *l) { xadd32(&l->word, (uint32_t)-SMPRW_WRITER); }
