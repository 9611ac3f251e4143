#include "runtime/pair.h"

#include "arch/tsc.h"
#include "kernel/fault.h"
#include "runtime/fiber.h"

static const char *const names[2] = { "pair-0", "pair-1" };

struct side {
    struct fiber_pair *p;
    int which;
};
static struct side sides[2];

/* Fiber 0 is entered from the caller with switch_callee and leaves the
 * same way; between the two, both fibers alternate through the pair's
 * routine. Fiber 1 ends suspended in its last switch. */
static void pair_fiber(void *arg)
{
    struct side *s = arg;
    struct fiber_pair *p = s->p;
    for (uint32_t i = 0; i < p->reps; i++) {
        p->work(p->ctx, s->which);
        p->sw(&p->word);
    }
    switch_callee(&p->main_word); /* only fiber 0 gets here */
}

bool pair_init(struct fiber_pair *p, enum switch_kind kind, uint32_t reps, void (*work)(void *, int), void *ctx)
{
    p->kind = kind;
    p->reps = reps;
    p->work = work;
    p->ctx = ctx;
    p->sw = switch_routine(kind);
    if (!fiber_stack_alloc(&p->stacks[0], FIBER_STACK_DEFAULT, names[0]))
        return false;
    if (!fiber_stack_alloc(&p->stacks[1], FIBER_STACK_DEFAULT, names[1])) {
        fiber_stack_free(&p->stacks[0]);
        return false;
    }
    fault_set_annotator(fiber_annotate_fault); /* a guard hit names pair-0/1 */
    return true;
}

void pair_prepare(struct fiber_pair *p)
{
    for (int i = 0; i < 2; i++)
        sides[i] = (struct side){ p, i };
    /* fiber 0 is entered by switch_callee, fiber 1 by the pair's routine */
    p->sp[0] = switch_initial_frame(SWITCH_CALLEE, fiber_stack_top(&p->stacks[0]), pair_fiber, &sides[0]);
    p->sp[1] = switch_initial_frame(p->kind, fiber_stack_top(&p->stacks[1]), pair_fiber, &sides[1]);
    p->word = p->sp[1];
    p->main_word = p->sp[0];
}

void pair_run_serial(struct fiber_pair *p)
{
    for (uint32_t i = 0; i < p->reps; i++)
        p->work(p->ctx, 0);
    for (uint32_t i = 0; i < p->reps; i++)
        p->work(p->ctx, 1);
}

void pair_run(struct fiber_pair *p)
{
    switch_callee(&p->main_word);
}

void pair_free(struct fiber_pair *p)
{
    fiber_stack_free(&p->stacks[1]);
    fiber_stack_free(&p->stacks[0]);
}

int64_t pair_switch_cycles(struct fiber_pair *p)
{
    pair_prepare(p);
    uint64_t t0 = tsc_begin();
    pair_run(p);
    uint64_t t1 = tsc_end();
    pair_run_serial(p);
    uint64_t serial = tsc_end() - t1, paired = t1 - t0;
    return (int64_t)paired - (int64_t)serial;
}
