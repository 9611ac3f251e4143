#include "runtime/smplock.h"

#include "arch/x86.h"
#include "kernel/park.h"

static const char *const names[SMPLOCK_KINDS][2] = {
    { "tas", "tas_pause" }, { "ttas", "ttas_pause" }, { "ticket", "ticket_pause" }, { "mcs", "mcs_pause" },
    { "spinblock", "spinblock" }, { "mutex", "mutex" },
};

const char *smplock_name(enum smplock_kind kind, bool use_pause) { return names[kind][use_pause ? 1 : 0]; }

void smplock_init(struct smplock *l, enum smplock_kind kind, bool use_pause)
{
    l->word = l->next = l->owner = 0;
    l->tail = 0;
    l->kind = kind;
    l->use_pause = use_pause || kind >= SMPLOCK_SPINBLOCK;
    l->lock_loops = l->unlock_loops = 0;
    l->waiters = (struct smp_waitq){ 0, 0, 0 };
    l->handoffs = l->parks = 0;
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

/* Both under the guard. */
static void enqueue(struct smp_waitq *q, struct smplock_node *n)
{
    n->next = 0;
    n->wait = 0;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
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

static void unpark(struct smplock_node *n)
{
    __atomic_store_n(&n->wait, 1, __ATOMIC_RELEASE);
    park_wake(&n->wait);
}

/* --- spinblock ------------------------------------------------------------------ */

static void spinblock_acquire(struct smplock *l, struct smplock_node *me)
{
    if (xchg32(&l->word, 1) == 0)
        return;
    for (uint32_t i = 0; i < l->lock_loops; i++) {
        cpu_pause();
        if (l->word == 0 && xchg32(&l->word, 1) == 0)
            return;
    }
    /* Under the guard, a free word is taken and a held one means its
     * holder's release will find us queued (it looks under the guard after
     * freeing the word): no wake-up can be lost. */
    guard_lock(&l->waiters);
    if (xchg32(&l->word, 1) == 0) {
        guard_unlock(&l->waiters);
        return;
    }
    enqueue(&l->waiters, me);
    l->parks = l->parks + 1;
    guard_unlock(&l->waiters);
    park_wait(&me->wait, 0); /* woken as the owner: release took the word for us */
}

static void spinblock_release(struct smplock *l)
{
    __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
    /* Wait for a spinning taker; with one, nobody needs waking. */
    for (uint32_t i = 0; i < l->unlock_loops; i++) {
        cpu_pause();
        if (l->word)
            return;
    }
    guard_lock(&l->waiters);
    /* a taker that came meanwhile hands over at its own release */
    if (!l->waiters.head || xchg32(&l->word, 1) != 0) {
        guard_unlock(&l->waiters);
        return;
    }
    struct smplock_node *n = dequeue(&l->waiters);
    l->handoffs = l->handoffs + 1;
    guard_unlock(&l->waiters);
    unpark(n);
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
    default:
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
    default:
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
    park_wait(&me->wait, 0);
    smplock_acquire(m, cpu);
}

void smpcond_signal(struct smpcond *c)
{
    guard_lock(&c->waiters);
    struct smplock_node *n = dequeue(&c->waiters);
    guard_unlock(&c->waiters);
    if (n)
        unpark(n);
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
