#include "runtime/sync_selftest.h"

#include "kernel/memory.h"
#include "kernel/selftest.h"
#include "lib/fmt.h"
#include "runtime/spinlock.h"
#include "runtime/stackpool.h"
#include "runtime/sync.h"

#define D SELFTEST_DETAIL_MAX
#define CROWD 4
#define ITERS 40

/* Every lock kind behind lock/unlock callbacks. */
struct tested_lock {
    const char *name;
    void (*lock)(void *);
    void (*unlock)(void *);
    void *obj;
};

static struct spinlock spins[6];
static struct fmutex mutex;
static struct spinblock sblock;
static struct fsem binary;

static void lock_spin(void *p) { spin_lock(p); }
static void unlock_spin(void *p) { spin_unlock(p); }
static void lock_mutex(void *p) { fmutex_lock(p); }
static void unlock_mutex(void *p) { fmutex_unlock(p); }
static void lock_sb(void *p) { spinblock_lock(p); }
static void unlock_sb(void *p) { spinblock_unlock(p); }
static void lock_sem(void *p) { fsem_wait(p); }
static void unlock_sem(void *p) { fsem_post(p); }

static uint32_t all_locks(struct tested_lock *out)
{
    uint32_t n = 0;
    for (int k = 0; k < SPIN_KINDS; k++) {
        for (int p = 0; p < 2; p++) {
            spin_init(&spins[n], (enum spin_kind)k, p);
            out[n] = (struct tested_lock){ spin_name((enum spin_kind)k, p), lock_spin, unlock_spin, &spins[n] };
            n++;
        }
    }
    fmutex_init(&mutex);
    spinblock_init(&sblock, 10, 10);
    fsem_init(&binary, 1);
    out[n++] = (struct tested_lock){ "mutex", lock_mutex, unlock_mutex, &mutex };
    out[n++] = (struct tested_lock){ "spinblock", lock_sb, unlock_sb, &sblock };
    out[n++] = (struct tested_lock){ "sem", lock_sem, unlock_sem, &binary };
    return n;
}

/* Runs n fibers of fn(arg) to the end on a fresh scheduler; false if they did not fit. */
static bool run_fibers(uint32_t n, void (*fn)(void *), void *arg)
{
    static struct fiber f[32];
    sched_init(SWITCH_CALLEE);
    uint32_t made = 0;
    while (made < n && fiber_create(&f[made], "test", fn, arg, 4096))
        made++;
    if (made == n)
        sched_run();
    for (uint32_t i = 0; i < made; i++)
        fiber_release(&f[i]);
    return made == n;
}

/* --- mutual exclusion under adversarial yields --------------------------------- */

struct exclusion {
    struct tested_lock *lock;
    uint32_t counter, inside, overlaps;
};

static void exclusion_fiber(void *arg)
{
    struct exclusion *e = arg;
    for (int i = 0; i < ITERS; i++) {
        e->lock->lock(e->lock->obj);
        if (e->inside++)
            e->overlaps++;
        uint32_t seen = e->counter;
        fiber_yield(); /* an adversarial switch inside the critical section */
        e->counter = seen + 1;
        e->inside--;
        e->lock->unlock(e->lock->obj);
        if (i & 1)
            fiber_yield();
    }
}

bool sync_test_mutual_exclusion(char *d)
{
    struct tested_lock locks[12];
    uint32_t n = all_locks(locks);
    struct region_mark mark;
    memory_mark(&mark);
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        struct exclusion e = { &locks[i], 0, 0, 0 };
        ok = run_fibers(CROWD, exclusion_fiber, &e) && e.counter == CROWD * ITERS && e.overlaps == 0;
        if (!ok)
            fmt(d, D, "%s: counter %u (want %u), %u overlaps", locks[i].name, e.counter, CROWD * ITERS, e.overlaps);
    }
    if (ok)
        fmt(d, D, "%u lock kinds: %d fibers x %d increments with a yield inside, none lost, no overlap", n, CROWD,
            ITERS);
    memory_release(&mark);
    return ok;
}

/* --- FIFO hand-over: ticket lock and fiber mutex ---------------------------------- */

struct fifo {
    struct tested_lock *lock;
    uint32_t order[CROWD], n;
};

static void fifo_fiber(void *arg)
{
    struct fifo *q = arg;
    uint32_t me = fiber_current()->id;
    q->lock->lock(q->lock->obj);
    q->order[q->n++] = me;
    fiber_yield(); /* hold it while the others queue up */
    q->lock->unlock(q->lock->obj);
}

bool sync_test_fifo(char *d)
{
    struct tested_lock locks[12];
    all_locks(locks);
    struct tested_lock *fifo_locks[] = { &locks[4], &locks[6] }; /* ticket, mutex */
    struct region_mark mark;
    memory_mark(&mark);
    bool ok = true;
    for (int k = 0; k < 2 && ok; k++) {
        struct fifo q = { fifo_locks[k], { 0 }, 0 };
        ok = run_fibers(CROWD, fifo_fiber, &q) && q.n == CROWD;
        for (uint32_t i = 0; i < q.n && ok; i++)
            ok = q.order[i] == i + 1; /* fibers got ids 1..CROWD in the order they queued */
        if (!ok)
            fmt(d, D, "%s: acquisition order %u %u %u %u", fifo_locks[k]->name, q.order[0], q.order[1], q.order[2],
                q.order[3]);
    }
    if (ok)
        fmt(d, D, "ticket lock and fiber mutex served %d waiters in arrival order", CROWD);
    memory_release(&mark);
    return ok;
}

/* --- condition variables lose no wake-up ------------------------------------------- */

struct mailbox {
    struct fmutex m;
    struct fcond nonempty, nonfull;
    uint32_t items, produced, consumed, waiting_consumers;
};

#define CV_ITEMS 200

static void cv_producer(void *arg)
{
    struct mailbox *b = arg;
    for (int i = 0; i < CV_ITEMS; i++) {
        fmutex_lock(&b->m);
        while (b->items == 2)
            fcond_wait(&b->nonfull, &b->m);
        b->items++;
        b->produced++;
        if (i % 3)
            fcond_signal(&b->nonempty);
        else
            fcond_broadcast(&b->nonempty);
        fmutex_unlock(&b->m);
    }
}

static void cv_consumer(void *arg)
{
    struct mailbox *b = arg;
    for (int i = 0; i < CV_ITEMS / 2; i++) {
        fmutex_lock(&b->m);
        while (b->items == 0)
            fcond_wait(&b->nonempty, &b->m);
        b->items--;
        b->consumed++;
        fcond_signal(&b->nonfull);
        fmutex_unlock(&b->m);
        fiber_yield();
    }
}

static void cv_start(void *arg)
{
    static struct fiber f[3];
    struct mailbox *b = arg;
    fiber_create(&f[0], "consumer", cv_consumer, b, 4096);
    fiber_create(&f[1], "consumer", cv_consumer, b, 4096);
    fiber_create(&f[2], "producer", cv_producer, b, 4096);
    fiber_join(&f[0]);
    fiber_join(&f[1]);
    fiber_join(&f[2]);
    for (int i = 0; i < 3; i++)
        fiber_release(&f[i]);
}

bool sync_test_condvar(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct mailbox b = { 0 };
    fmutex_init(&b.m);
    fcond_init(&b.nonempty);
    fcond_init(&b.nonfull);
    bool ok = run_fibers(1, cv_start, &b) && b.produced == CV_ITEMS && b.consumed == CV_ITEMS && b.items == 0;
    fmt(d, D, "bounded buffer of 2, signal and broadcast: %u produced, %u consumed (want %d), nobody left waiting",
        b.produced, b.consumed, CV_ITEMS);
    memory_release(&mark);
    return ok;
}

/* --- barriers release exactly n per generation ------------------------------------------ */

#define BAR_N 5
#define GENERATIONS 30

struct barrier_test {
    struct fbarrier b;
    uint32_t passed[GENERATIONS], last_ones[GENERATIONS];
    uint32_t early;
};

static void barrier_fiber(void *arg)
{
    struct barrier_test *t = arg;
    for (uint32_t g = 0; g < GENERATIONS; g++) {
        if (t->b.generation != g)
            t->early++; /* someone got past a barrier before all arrived */
        bool last = fbarrier_wait(&t->b);
        t->passed[g]++;
        t->last_ones[g] += last;
        if (g % 2)
            fiber_yield();
    }
}

bool sync_test_barrier(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct barrier_test t = { 0 };
    fbarrier_init(&t.b, BAR_N);
    bool ok = run_fibers(BAR_N, barrier_fiber, &t) && t.early == 0 && t.b.generation == GENERATIONS;
    for (int g = 0; g < GENERATIONS && ok; g++)
        ok = t.passed[g] == BAR_N && t.last_ones[g] == 1;
    fmt(d, D, "%d fibers x %d generations: each released exactly %d, one 'last' each, %u early", BAR_N, GENERATIONS,
        BAR_N, t.early);
    memory_release(&mark);
    return ok;
}

/* --- semaphore counts stay exact ------------------------------------------------------------ */

struct sem_test {
    struct fsem s;
    uint32_t holders, max_holders, done;
};

static void sem_fiber(void *arg)
{
    struct sem_test *t = arg;
    for (int i = 0; i < 20; i++) {
        fsem_wait(&t->s);
        if (++t->holders > t->max_holders)
            t->max_holders = t->holders;
        fiber_yield();
        t->holders--;
        fsem_post(&t->s);
    }
    t->done++;
}

bool sync_test_semaphore(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct sem_test t = { 0 };
    fsem_init(&t.s, 3);
    bool ok = run_fibers(8, sem_fiber, &t) && t.done == 8 && t.max_holders == 3 && t.s.count == 3;
    fmt(d, D, "8 fibers on a semaphore of 3: at most %u inside at once, count back to %u", t.max_holders, t.s.count);
    memory_release(&mark);
    return ok;
}

/* --- the constant-time stack pool --------------------------------------------------------------- */

bool sync_test_stack_pool(char *d)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct stackpool p;
    struct fiber_stack s[9];
    bool ok = stackpool_init(&p, 8, 4096);
    uint32_t got = 0;
    while (ok && got < 9 && stackpool_take(&p, &s[got]))
        got++;
    for (uint32_t i = 0; i < got && ok; i++)
        for (uint32_t j = 0; j < i && ok; j++)
            ok = s[i].base + s[i].size <= s[j].base || s[j].base + s[j].size <= s[i].base;
    bool exhausted = got == 8 && stackpool_free_count(&p) == 0;
    for (uint32_t i = 0; i < got; i++)
        stackpool_give(&p, &s[i]);
    struct fiber_stack again;
    ok = ok && exhausted && stackpool_free_count(&p) == 8 && stackpool_take(&p, &again) && again.base == s[7].base;
    fmt(d, D, "pool of 8: %u distinct stacks, the 9th refused, all given back, last in first out", got);
    memory_release(&mark);
    return ok;
}
