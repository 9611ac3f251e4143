#include "runtime/pingpong.h"

void pingpong_init(struct fiber_pingpong *p, uint32_t rounds)
{
    fmutex_init(&p->m);
    fcond_init(&p->cv);
    p->turn = 0;
    p->rounds = rounds;
}

void pingpong_body(void *arg)
{
    struct fiber_pingpong *p = arg;
    uint32_t me = fiber_current() == &p->f[0] ? 0 : 1;
    for (uint32_t i = 0; i < p->rounds; i++) {
        fmutex_lock(&p->m);
        while (p->turn != me)
            fcond_wait(&p->cv, &p->m);
        p->turn = !me;
        fcond_signal(&p->cv);
        fmutex_unlock(&p->m);
    }
}
