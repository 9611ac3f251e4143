#include "runtime/pair.h"

#include "arch/tsc.h"
#include "kernel/fault.h"
#include "runtime/fiber.h"

static const char *const names[2] = { "pair-0", "pair-1" };

/* The second fiber's frames start this far below its stack's top. Both
 * stacks are page-aligned and the fibers run the same code, so without it
 * every switch pushes to one stack and pops from the other at the same
 * offset within a page: loads that match the stores just before them in
 * address bits 0-11 (4K aliasing, which a CPU may take for a dependence).
 * In the hosted build on the development machine (AMD family 26) some
 * processes then ran the symmetric pair at 12-14 TSC ticks a switch instead
 * of 6-8 (3 of 20; with the stagger none of 20). At equal depth the two
 * stacks' addresses now differ by half a page and a cache line there. */
#define PAIR_STAGGER (2048 + 64)

struct side {
    struct fiber_pair *p;
    int which;
};
static struct side sides[2];

/* What the loops call in place of the switch: the baselines. */
static void __attribute__((fastcall)) no_switch(uint32_t *word) { (void)word; }

/* The loops are noipa (no inlining, no cloning, no merging of look-alikes):
 * each exists once, so the switch and the empty call in its place run the
 * very same instructions around them, and the symmetric shape's two fibers
 * share one call site while the asymmetric shape's two loops keep theirs. */

/* The symmetric shape: both fibers run this, each with its `which`. */
static void __attribute__((noipa)) pair_loop(struct fiber_pair *p, int which, switch_fn sw, uint32_t *word)
{
    for (uint32_t i = 0; i < p->reps; i++) {
        p->work(p->ctx, which);
        sw(word);
    }
}

/* The asymmetric shape: the driver's loop, in the caller's context... */
static void __attribute__((noipa)) driver_loop(struct fiber_pair *p, switch_fn sw, uint32_t *word)
{
    for (uint32_t i = 0; i < p->reps; i++) {
        p->work(p->ctx, 0);
        sw(word);
    }
}

/* ...and the coroutine's, a call site of its own. */
static void __attribute__((noipa)) coroutine_loop(struct fiber_pair *p, switch_fn sw, uint32_t *word)
{
    for (uint32_t i = 0; i < p->reps; i++) {
        p->work(p->ctx, 1);
        sw(word);
    }
}

/* Fiber 0 is entered from the caller with switch_callee and leaves the
 * same way; between the two, both fibers alternate through the pair's
 * routine. Fiber 1 ends suspended in its last switch. */
static void pair_fiber(void *arg)
{
    struct side *s = arg;
    struct fiber_pair *p = s->p;
    pair_loop(p, s->which, p->sw, &p->word);
    switch_callee(&p->main_word); /* only fiber 0 gets here */
}

/* The driver's last switch resumes it, not the coroutine, which stays
 * suspended in its last switch: it never returns (its initial frame traps
 * a return anyway). */
static void pair_coroutine(void *arg)
{
    struct fiber_pair *p = arg;
    coroutine_loop(p, p->sw, &p->word);
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
    p->main_word = switch_initial_frame(SWITCH_CALLEE, fiber_stack_top(&p->stacks[0]), pair_fiber, &sides[0]);
    p->word = switch_initial_frame(p->kind, fiber_stack_top(&p->stacks[1]) - PAIR_STAGGER, pair_fiber, &sides[1]);
}

void pair_run_serial(struct fiber_pair *p)
{
    pair_loop(p, 0, no_switch, &p->word);
    pair_loop(p, 1, no_switch, &p->word);
}

void pair_run(struct fiber_pair *p)
{
    switch_callee(&p->main_word);
}

void pair_prepare_driver(struct fiber_pair *p)
{
    p->word = switch_initial_frame(p->kind, fiber_stack_top(&p->stacks[1]), pair_coroutine, p);
}

void pair_run_driver(struct fiber_pair *p)
{
    driver_loop(p, p->sw, &p->word);
}

void pair_run_driver_serial(struct fiber_pair *p)
{
    driver_loop(p, no_switch, &p->word);
    coroutine_loop(p, no_switch, &p->word);
}

void pair_free(struct fiber_pair *p)
{
    fiber_stack_free(&p->stacks[1]);
    fiber_stack_free(&p->stacks[0]);
}

int64_t pair_timed_symmetric(void *pair)
{
    pair_prepare(pair);
    uint64_t t0 = tsc_begin();
    pair_run(pair);
    return (int64_t)(tsc_end() - t0);
}

int64_t pair_timed_asymmetric(void *pair)
{
    pair_prepare_driver(pair);
    uint64_t t0 = tsc_begin();
    pair_run_driver(pair);
    return (int64_t)(tsc_end() - t0);
}

int64_t pair_timed_serial(void *pair)
{
    uint64_t t0 = tsc_begin();
    pair_run_serial(pair);
    return (int64_t)(tsc_end() - t0);
}

int64_t pair_timed_driver_serial(void *pair)
{
    uint64_t t0 = tsc_begin();
    pair_run_driver_serial(pair);
    return (int64_t)(tsc_end() - t0);
}
