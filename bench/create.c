/* bench create: the life cycle of a fiber (create, run to exit, join),
 * per fiber, with its stack from the constant-time pool of LiteThreads
 * (case pool) or from a general first-fit allocator (case firstfit), with
 * `outstanding` fibers alive at once. Stacks are given back in a shuffled
 * (but fixed) order, as the LiteThreads benchmark randomised its stack use:
 * the first-fit free list fragments; the pool does not care. */
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/memory.h"
#include "runtime/fiber.h"
#include "runtime/stackpool.h"

#define CREATE_STACK 4096
#define MAX_OUTSTANDING 1024

enum source { FROM_POOL, FROM_FIRSTFIT };

struct life {
    enum source source;
    uint32_t outstanding;
    struct stackpool pool;
    struct firstfit heap;
    struct fiber parent;
    struct fiber children[MAX_OUTSTANDING];
    uint16_t order[MAX_OUTSTANDING];
    bool exhausted;
};

static void child(void *arg) { (void)arg; }

/* A fixed shuffle (linear congruential generator, Fisher-Yates). */
static void shuffle(uint16_t *order, uint32_t n)
{
    uint32_t x = 12345;
    for (uint32_t i = 0; i < n; i++)
        order[i] = (uint16_t)i;
    for (uint32_t i = n; i > 1; i--) {
        x = x * 1103515245u + 12345u;
        uint32_t j = (x >> 8) % i;
        uint16_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

static void parent(void *arg)
{
    struct life *l = arg;
    uint32_t made = 0;
    for (; made < l->outstanding; made++) {
        struct fiber_stack s;
        bool ok = l->source == FROM_POOL ? stackpool_take(&l->pool, &s)
                                         : firstfit_take_stack(&l->heap, CREATE_STACK, &s);
        if (!ok) {
            l->exhausted = true; /* a clear error for the benchmark, not a crash */
            break;
        }
        fiber_create_on(&l->children[made], "child", child, 0, &s);
    }
    for (uint32_t i = 0; i < made; i++)
        fiber_join(&l->children[i]);
    for (uint32_t i = 0; i < made; i++) {
        /* order is a permutation of 0..outstanding-1; exhausted: plain order */
        const struct fiber_stack *s = &l->children[made == l->outstanding ? l->order[i] : i].stack;
        if (l->source == FROM_POOL)
            stackpool_give(&l->pool, s);
        else
            firstfit_give_stack(&l->heap, s);
    }
}

static int64_t run_life(void *arg)
{
    struct life *l = arg;
    const struct fiber_spec spec = { &l->parent, "parent", parent, l, 0 };
    return bench_time_fibers(&spec, 1, 0);
}

static struct life life;

static void run(struct bench_ctx *ctx)
{
    static const uint32_t outstanding[] = { 1, 16, 256, 1024 };
    static const char *const names[] = { "pool", "firstfit" };
    const uint32_t no = sizeof outstanding / sizeof outstanding[0];
    bench_plan(ctx, 2 * no);
    struct region_mark mark;
    memory_mark(&mark);
    /* one pool and one heap for every case: both hold MAX_OUTSTANDING stacks */
    bool pool_ok = stackpool_init(&life.pool, MAX_OUTSTANDING, CREATE_STACK);
    bool heap_ok = firstfit_init(&life.heap, MAX_OUTSTANDING * (CREATE_STACK + 32));
    for (int s = FROM_POOL; s <= FROM_FIRSTFIT; s++) {
        for (uint32_t i = 0; i < no; i++) {
            if (!(s == FROM_POOL ? pool_ok : heap_ok)) {
                bench_skip(ctx, names[s], "no memory for the stacks");
                continue;
            }
            life.source = (enum source)s;
            life.outstanding = outstanding[i];
            life.exhausted = false;
            shuffle(life.order, outstanding[i]);
            struct bench_case c = { .name = names[s], .per = outstanding[i] };
            c.params[c.nparams++] = (struct bench_param)PARAM_NUM("outstanding", outstanding[i]);
            c.params[c.nparams++] = (struct bench_param)PARAM_NUM("stack", CREATE_STACK);
            run_life(&life);
            if (life.exhausted) {
                bench_skip(ctx, names[s], "stack allocator exhausted");
                continue;
            }
            bench_measure(ctx, &c, run_life, &life);
        }
    }
    memory_release(&mark);
}

const struct bench bench_create = {
    .name = "create",
    .what = "fiber create + run + join: constant-time stack pool vs first-fit allocator",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
