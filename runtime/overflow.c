#include "runtime/overflow.h"

#include "runtime/fiber.h"

static struct fiber victim;

__attribute__((noinline)) uint32_t overflow_recurse(volatile uint32_t n)
{
    volatile uint32_t frame[32];
    if (n > 1000000) /* far deeper than any stack: never reached */
        return 0;
    frame[n & 31] = n;
    return overflow_recurse(n + 1) + frame[n & 31];
}

static void overflow_fiber(void *arg)
{
    (void)arg;
    overflow_recurse(0);
}

void fiber_overflow_run(void)
{
    sched_init(SWITCH_CALLEE);
    if (fiber_create(&victim, OVERFLOW_FIBER_NAME, overflow_fiber, 0, 4096))
        sched_run();
}

void fiber_overflow_cleanup(void)
{
    fiber_release(&victim);
    sched_init(SWITCH_CALLEE);
}
