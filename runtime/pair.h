/* The paper's minimal concurrency (Klimiankou 2018, section 3.3): two
 * parties and one state word, no scheduler, each calling work() and then
 * switching to the other, `reps` times: 2*reps work calls and 2*reps
 * switches in all. Two shapes:
 *
 *   symmetric (pair_run): two fibers run the same loop, so both call the
 *     switch from the same call site (the paper's pair). The context that
 *     calls pair_run() waits meanwhile.
 *   asymmetric (pair_run_driver): a driver loop in the calling context and
 *     one coroutine on a stack of its own, each calling the switch from its
 *     own call site: the way coroutine libraries are used (resume here,
 *     yield there), which defeats a return-stack prediction.
 *
 * Each shape has its loop (pair_run_serial, pair_run_driver_serial): the
 * very same loops, run one after the other in the caller, with the switch
 * call replaced by a call of an empty function through the same kind of
 * pointer. A shape minus its loop is what switching adds. */
#ifndef RUNTIME_PAIR_H
#define RUNTIME_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stack.h"
#include "runtime/switch.h"

struct fiber_pair {
    enum switch_kind kind;
    uint32_t reps;
    void (*work)(void *ctx, int which); /* which: 0 = first fiber (driver), 1 = second (coroutine) */
    void *ctx;
    /* internal */
    switch_fn sw;
    struct fiber_stack stacks[2];
    uint32_t word, main_word;
};

/* Takes two guarded stacks; false if they do not fit. */
bool pair_init(struct fiber_pair *p, enum switch_kind kind, uint32_t reps, void (*work)(void *, int), void *ctx);
/* Builds fresh initial frames: call before every pair_run, outside the timed region. */
void pair_prepare(struct fiber_pair *p);
/* The symmetric shape's loop in the caller, no fibers: work(ctx, 0) reps
 * times, then work(ctx, 1) reps times (the paper's single-threaded case),
 * each followed by the empty call. pair_run minus this is what switching
 * costs. */
void pair_run_serial(struct fiber_pair *p);
void pair_run(struct fiber_pair *p);
/* A fresh coroutine (on the second stack): call before every
 * pair_run_driver, outside the timed region. */
void pair_prepare_driver(struct fiber_pair *p);
/* The asymmetric shape: the caller drives, work(ctx, 0) and a switch to
 * the coroutine, which runs work(ctx, 1) and switches back; reps times. */
void pair_run_driver(struct fiber_pair *p);
/* The asymmetric shape's loops in the caller: the driver's, then the
 * coroutine's, each with the empty call instead of the switch. */
void pair_run_driver_serial(struct fiber_pair *p);
void pair_free(struct fiber_pair *p);
/* TSC ticks of one run of each shape and of its loop alone, the fresh
 * frames built before the clock starts. The argument is the struct
 * fiber_pair, so these serve as the benchmarks' run functions directly. */
int64_t pair_timed_symmetric(void *pair);
int64_t pair_timed_asymmetric(void *pair);
int64_t pair_timed_serial(void *pair);
int64_t pair_timed_driver_serial(void *pair);

#endif
