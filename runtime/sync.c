#include "runtime/sync.h"

#include "arch/x86.h"

void fmutex_init(struct fmutex *m) { *m = (struct fmutex){ 0 }; }

void fmutex_lock(struct fmutex *m)
{
    if (!m->locked) {
        m->locked = true;
        m->owner = fiber_current();
        return;
    }
    fiber_wait_on(&m->waiters); /* woken as the new owner (see unlock) */
}

void fmutex_unlock(struct fmutex *m)
{
    struct fiber *next = fq_pop(&m->waiters);
    if (next) { /* hand over: the lock stays taken, in FIFO order */
        m->owner = next;
        fiber_wake(next);
        return;
    }
    m->locked = false;
    m->owner = 0;
}

void fsem_init(struct fsem *s, uint32_t count) { *s = (struct fsem){ count, { 0, 0 } }; }

void fsem_wait(struct fsem *s)
{
    if (s->count) {
        s->count--;
        return;
    }
    fiber_wait_on(&s->waiters); /* post hands its unit over */
}

void fsem_post(struct fsem *s)
{
    if (!fiber_wake_one(&s->waiters))
        s->count++;
}

void fcond_init(struct fcond *c) { *c = (struct fcond){ { 0, 0 } }; }

void fcond_wait(struct fcond *c, struct fmutex *m)
{
    fq_push(&c->waiters, fiber_current());
    fmutex_unlock(m);
    fiber_block();
    fmutex_lock(m);
}

void fcond_wait_spinblock(struct fcond *c, struct spinblock *m)
{
    fq_push(&c->waiters, fiber_current());
    spinblock_unlock(m);
    fiber_block();
    spinblock_lock(m);
}

void fcond_signal(struct fcond *c) { fiber_wake_one(&c->waiters); }

void fcond_broadcast(struct fcond *c)
{
    while (fiber_wake_one(&c->waiters))
        ;
}

void fbarrier_init(struct fbarrier *b, uint32_t n) { *b = (struct fbarrier){ n, 0, 0, { 0, 0 } }; }

bool fbarrier_wait(struct fbarrier *b)
{
    if (++b->arrived < b->n) {
        fiber_wait_on(&b->waiters);
        return false;
    }
    b->arrived = 0; /* the next generation starts now */
    b->generation++;
    while (fiber_wake_one(&b->waiters))
        ;
    return true;
}

void spinblock_init(struct spinblock *m, uint32_t lock_loops, uint32_t unlock_loops)
{
    *m = (struct spinblock){ 0, lock_loops, unlock_loops, { 0, 0 }, 0 };
}

void spinblock_lock(struct spinblock *m)
{
    if (xchg32(&m->word, 1) == 0)
        return;
    for (uint32_t i = 0; i < m->lock_loops; i++) {
        cpu_pause();
        if (m->word == 0 && xchg32(&m->word, 1) == 0)
            return;
    }
    fiber_wait_on(&m->waiters); /* woken as the new owner (see unlock) */
}

void spinblock_unlock(struct spinblock *m)
{
    m->word = 0;
    /* Wait for a taker. On one CPU none can come while we spin: LiteThreads
     * found this time wasted, linear in unlock_loops. */
    for (uint32_t i = 0; i < m->unlock_loops; i++) {
        cpu_pause();
        if (m->word)
            return;
    }
    if (fq_empty(&m->waiters) || xchg32(&m->word, 1) != 0)
        return;
    m->handoffs++;
    fiber_wake(fq_pop(&m->waiters));
}
