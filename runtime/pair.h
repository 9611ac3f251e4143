/* The paper's minimal concurrency (Klimiankou 2018, section 3.3): two
 * fibers and one state word, no scheduler. Each fiber calls work() and then
 * switches to the other, `reps` times; 2*reps work calls and 2*reps
 * switches in all. The context that calls pair_run() waits meanwhile. */
#ifndef RUNTIME_PAIR_H
#define RUNTIME_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stack.h"
#include "runtime/switch.h"

struct fiber_pair {
    enum switch_kind kind;
    uint32_t reps;
    void (*work)(void *ctx, int which); /* which: 0 = first fiber, 1 = second */
    void *ctx;
    /* internal */
    switch_fn sw;
    struct fiber_stack stacks[2];
    uint32_t sp[2];
    uint32_t word, main_word;
};

/* Takes two guarded stacks; false if they do not fit. */
bool pair_init(struct fiber_pair *p, enum switch_kind kind, uint32_t reps, void (*work)(void *, int), void *ctx);
/* Builds fresh initial frames: call before every pair_run, outside the timed region. */
void pair_prepare(struct fiber_pair *p);
/* The same work serialised in the caller, no fibers: work(ctx, 0) reps
 * times, then work(ctx, 1) reps times (the paper's single-threaded case).
 * pair_run minus this is what concurrency costs. */
void pair_run_serial(struct fiber_pair *p);
void pair_run(struct fiber_pair *p);
void pair_free(struct fiber_pair *p);
/* Cycles of pair_run minus pair_run_serial (prepared here): the 2*reps
 * switches, their calls included. Signed: a difference inside the noise
 * may be negative, and is returned as measured. */
int64_t pair_switch_cycles(struct fiber_pair *p);

#endif
