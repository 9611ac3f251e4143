/* Two fibers taking turns through a fiber mutex and a condition variable,
 * `rounds` times each: the ping-pong of bench locks (condvar) and of the
 * hosted peers comparison (against NPTL threads doing the same). */
#ifndef RUNTIME_PINGPONG_H
#define RUNTIME_PINGPONG_H

#include <stdint.h>

#include "runtime/sync.h"

struct fiber_pingpong {
    struct fmutex m;
    struct fcond cv;
    uint32_t turn, rounds;
    struct fiber f[2];
};

void pingpong_init(struct fiber_pingpong *p, uint32_t rounds);
/* The body of both fibers (p->f[0] and p->f[1]); arg is p. */
void pingpong_body(void *arg);

#endif
