#include "runtime/spinlock.h"

#include "runtime/fiber.h"

static const char *const names[SPIN_KINDS][2] = {
    { "tas", "tas_pause" }, { "ttas", "ttas_pause" }, { "ticket", "ticket_pause" },
};

const char *spin_name(enum spin_kind kind, bool use_pause) { return names[kind][use_pause ? 1 : 0]; }

void spin_init(struct spinlock *l, enum spin_kind kind, bool use_pause)
{
    l->word = l->next = l->owner = 0;
    l->kind = kind;
    l->use_pause = use_pause;
}

/* One turn of a wait loop. The holder can only be a fiber that yielded
 * while holding the lock: let it run. */
static inline void wait_turn(const struct spinlock *l)
{
    if (l->use_pause)
        cpu_pause();
    if (fiber_current() && fiber_current()->state == FIBER_RUNNING && fiber_current()->id)
        fiber_yield();
}

bool spin_trylock(struct spinlock *l)
{
    if (l->kind == SPIN_TICKET) {
        uint32_t t = l->next;
        if (l->owner != t)
            return false;
        return __sync_bool_compare_and_swap(&l->next, t, t + 1);
    }
    return xchg32(&l->word, 1) == 0;
}

void spin_lock(struct spinlock *l)
{
    switch (l->kind) {
    case SPIN_TAS:
        while (xchg32(&l->word, 1))
            wait_turn(l);
        break;
    case SPIN_TTAS:
        for (;;) {
            while (l->word) /* read-only until it looks free */
                wait_turn(l);
            if (!xchg32(&l->word, 1))
                break;
        }
        break;
    default: {
        uint32_t ticket = xadd32(&l->next, 1);
        while (l->owner != ticket)
            wait_turn(l);
        break;
    }
    }
    compiler_barrier();
}

void spin_unlock(struct spinlock *l)
{
    compiler_barrier();
    if (l->kind == SPIN_TICKET)
        l->owner = l->owner + 1;
    else
        l->word = 0;
}
