#define _GNU_SOURCE
#include "bench/peerloops.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <ucontext.h>

static const char *const shape_names[PEER_SHAPES] = { "symmetric", "asymmetric" };

const char *peer_shape_name(enum peer_shape shape)
{
    return (unsigned)shape < PEER_SHAPES ? shape_names[shape] : "?";
}

bool peer_shape_parse(const char *word, enum peer_shape *shape)
{
    for (int s = 0; s < PEER_SHAPES; s++) {
        if (strcmp(word, shape_names[s]) == 0) {
            *shape = (enum peer_shape)s;
            return true;
        }
    }
    return false;
}

static void no_work(void *ctx, int which) { (void)ctx, (void)which; }

void (*peer_work)(void *ctx, int which) = no_work;

/* --- glibc swapcontext ------------------------------------------------------------------ */

/* makecontext passes only ints, so the sides find their state here. */
static struct {
    ucontext_t main, side[2];
    uint64_t half; /* switches each side makes */
} uc;

/* Both sides of the symmetric shape: the same loop, one call site. Side 0
 * returns at the end, through uc_link, to the caller; side 1 is left
 * suspended in its last switch (its context is rebuilt for the next run). */
static void uc_side(int which)
{
    for (uint64_t i = 0; i < uc.half; i++) {
        peer_work(0, which);
        swapcontext(&uc.side[which], &uc.side[!which]);
    }
}

/* The coroutine of the asymmetric shape: it answers every switch of the
 * driver's loop from its own call site. Left suspended at the end. */
static void uc_coroutine(void)
{
    for (;;) {
        peer_work(0, 1);
        swapcontext(&uc.side[0], &uc.main);
    }
}

static void uc_make(int which, uint8_t *stack, size_t bytes, void (*fn)(void), int argc)
{
    getcontext(&uc.side[which]);
    uc.side[which].uc_stack.ss_sp = stack;
    uc.side[which].uc_stack.ss_size = bytes;
    uc.side[which].uc_link = &uc.main;
    /* void (*)(void) is the type makecontext takes for any entry */
    makecontext(&uc.side[which], fn, argc, which);
}

int64_t peer_ucontext(enum peer_shape shape, uint64_t switches, void *stacks, size_t stack_bytes)
{
    uint8_t *s = stacks;
    uc.half = switches / 2;
    if (shape == PEER_SYMMETRIC) {
        uc_make(0, s, stack_bytes, (void (*)(void))uc_side, 1);
        uc_make(1, s + stack_bytes, stack_bytes, (void (*)(void))uc_side, 1);
        uint64_t t0 = peer_clock_begin();
        swapcontext(&uc.main, &uc.side[0]);
        return (int64_t)(peer_clock_end() - t0);
    }
    uc_make(0, s, stack_bytes, uc_coroutine, 0);
    uint64_t t0 = peer_clock_begin();
    for (uint64_t i = 0; i < uc.half; i++) {
        peer_work(0, 0);
        swapcontext(&uc.main, &uc.side[0]);
    }
    return (int64_t)(peer_clock_end() - t0);
}

/* --- pthread mutex + condition variable ------------------------------------------------- */

struct handoff {
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint32_t turn; /* whose turn it is: 0 the caller, 1 the second thread */
    bool ready;
    uint64_t turns; /* each thread's */
};

/* The loop both threads run: wait for my turn, hand it over. */
static void handoff_turns(struct handoff *h, uint32_t me)
{
    for (uint64_t i = 0; i < h->turns; i++) {
        pthread_mutex_lock(&h->m);
        while (h->turn != me)
            pthread_cond_wait(&h->cv, &h->m);
        h->turn = !me;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->m);
    }
}

static void *handoff_thread(void *arg)
{
    struct handoff *h = arg;
    pthread_mutex_lock(&h->m);
    h->ready = true;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->m);
    handoff_turns(h, 1);
    return 0;
}

int64_t peer_pthread_handoff(uint64_t handoffs)
{
    static struct handoff h;
    pthread_mutex_init(&h.m, 0);
    pthread_cond_init(&h.cv, 0);
    h.turn = 0;
    h.ready = false;
    h.turns = handoffs / 2;
    pthread_t t;
    int err = pthread_create(&t, 0, handoff_thread, &h);
    if (err)
        return -(int64_t)err;
    /* The clock starts once the thread is past its start-up: creating it is
     * not a handoff. */
    pthread_mutex_lock(&h.m);
    while (!h.ready)
        pthread_cond_wait(&h.cv, &h.m);
    pthread_mutex_unlock(&h.m);
    uint64_t t0 = peer_clock_begin();
    handoff_turns(&h, 0);
    pthread_mutex_lock(&h.m); /* the last turn, the other thread's, hands back to here */
    while (h.turn != 0)
        pthread_cond_wait(&h.cv, &h.m);
    pthread_mutex_unlock(&h.m);
    int64_t ticks = (int64_t)(peer_clock_end() - t0);
    pthread_join(t, 0);
    pthread_cond_destroy(&h.cv);
    pthread_mutex_destroy(&h.m);
    return ticks;
}
