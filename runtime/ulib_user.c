#include "runtime/ulib_user.h"

#include "arch/usermode.h"
#include "arch/x86.h"

uint32_t usys(uint32_t nr, uint32_t a, uint32_t b, uint32_t c)
{
    return U_CONTROL->use_sysenter ? usys_sysenter(nr, a, b, c) : usys_int80(nr, a, b, c);
}

void uyield(void) { usys(USYS_YIELD, 0, 0, 0); }
void umark(void) { usys(USYS_MARK, 0, 0, 0); }
void ucommit(void) { usys(USYS_COMMIT, 0, 0, 0); }
uint32_t ujoin(uint32_t tid) { return usys(USYS_JOIN, tid, 0, 0); }
uint32_t umap(uint32_t va, uint32_t pages) { return usys(USYS_MAP, va, pages, 0); }
uint32_t uunmap(uint32_t va, uint32_t pages) { return usys(USYS_UNMAP, va, pages, 0); }

void uexit(uint32_t status)
{
    usys(USYS_EXIT, status, 0, 0);
    for (;;) /* the kernel never returns to an ended thread */
        ;
}

uint32_t ucreate(void (*fn)(void *), void *arg)
{
    uint32_t tid = usys(USYS_CREATE, (uint32_t)fn, (uint32_t)arg, 0);
    if (tid == 0) { /* the forked child */
        fn(arg);
        uexit(0);
    }
    return tid;
}

void uthread_entry(void (*fn)(void *), void *arg)
{
    fn(arg);
    uexit(0);
}

struct uself *uself(void)
{
    uint32_t slot = (U_STACK_TOP - 1 - read_esp()) / U_STACK_SLOT;
    return (struct uself *)(U_STACK_TOP - slot * U_STACK_SLOT - sizeof(struct uself));
}

/* Drepper, "Futexes are tricky", mutex 2: 0 free, 1 held, 2 held with
 * possible waiters; only a contended lock or unlock enters the kernel. */
void umutex_lock(struct umutex *m)
{
    if (U_CONTROL->commit_mode)
        ucommit();
    uint32_t c = cmpxchg32(&m->state, 0, 1);
    if (c == 0)
        return;
    if (c != 2)
        c = xchg32(&m->state, 2);
    while (c != 0) {
        usys(USYS_FUTEX_WAIT, (uint32_t)&m->state, 2, 0);
        c = xchg32(&m->state, 2);
    }
}

void umutex_unlock(struct umutex *m)
{
    if (U_CONTROL->commit_mode)
        ucommit();
    if (xadd32(&m->state, (uint32_t)-1) != 1) {
        m->state = 0;
        usys(USYS_FUTEX_WAKE, (uint32_t)&m->state, 1, 0);
    }
}

void ucond_wait(struct ucond *c, struct umutex *m)
{
    uint32_t seq = c->seq;
    umutex_unlock(m);
    usys(USYS_COND_WAIT, (uint32_t)&c->seq, seq, 0);
    umutex_lock(m);
}

void ucond_signal(struct ucond *c) { usys(USYS_COND_SIGNAL, (uint32_t)&c->seq, 0, 0); }
void ucond_broadcast(struct ucond *c) { usys(USYS_COND_BROADCAST, (uint32_t)&c->seq, 0, 0); }
bool ubarrier_wait(struct ubarrier *b) { return usys(USYS_BARRIER_WAIT, (uint32_t)b, 0, 0) == 1; }
