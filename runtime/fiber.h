/* Cooperative fibers on one CPU with a FIFO run queue, in the states of
 * Valchanov & Andreev's dispatcher: new, ready, running, waiting, dead.
 * Every switch goes through one of the switch routines (runtime/switch.h),
 * chosen per scheduler; the context that calls sched_run() is the "main"
 * fiber and gets control back when no fiber is ready. */
#ifndef RUNTIME_FIBER_H
#define RUNTIME_FIBER_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stack.h"
#include "runtime/switch.h"

enum fiber_state { FIBER_NEW, FIBER_READY, FIBER_RUNNING, FIBER_WAITING, FIBER_DEAD };

struct fiber {
    uint32_t sp;                /* saved stack pointer while not running */
    enum fiber_state state;
    uint32_t id;
    const char *name;
    void (*fn)(void *);
    void *arg;
    struct fiber_stack stack;
    struct fiber *next;         /* run queue or a wait queue */
    struct fiber *joiner;       /* waiting in fiber_join for this one */
};

/* A FIFO of fibers (the run queue, and every wait queue): a fiber is in at
 * most one queue at a time, linked through fiber.next. */
struct fiber_queue {
    struct fiber *head, *tail;
};
void fq_push(struct fiber_queue *q, struct fiber *f);
struct fiber *fq_pop(struct fiber_queue *q); /* NULL when empty */
static inline bool fq_empty(const struct fiber_queue *q) { return !q->head; }

/* Resets the scheduler: no fibers, the caller is the main fiber. */
void sched_init(enum switch_kind kind);
/* Creates a fiber on its own guarded stack and makes it ready. False when
 * its stack does not fit in memory. */
bool fiber_create(struct fiber *f, const char *name, void (*fn)(void *), void *arg, uint32_t stack_size);
/* The same on a stack the caller provides (a pool's, an allocator's). */
void fiber_create_on(struct fiber *f, const char *name, void (*fn)(void *), void *arg, const struct fiber_stack *stack);
/* Runs fibers until none is ready; returns in the main fiber. */
void sched_run(void);
/* From a fiber: to the back of the run queue, and run the next one. */
void fiber_yield(void);
/* From a fiber: dead; wakes its joiner. */
__attribute__((noreturn)) void fiber_exit(void);
/* From a fiber: waits until f is dead. */
void fiber_join(struct fiber *f);
/* From a fiber: waiting until fiber_wake (the basis of blocking primitives). */
void fiber_block(void);
/* From a fiber: joins q, then blocks (what every blocking primitive does). */
void fiber_wait_on(struct fiber_queue *q);
/* Wakes the first fiber of q; false when q was empty. */
bool fiber_wake_one(struct fiber_queue *q);
void fiber_wake(struct fiber *f);
/* Gives the stack of a dead fiber back (guard page mapped again). */
void fiber_release(struct fiber *f);

struct fiber *fiber_current(void);
const char *fiber_state_name(enum fiber_state s);
uint32_t sched_switches(void);
/* Names the fiber in fault records (installed by sched_init). */
void fiber_annotate_fault(uint32_t vector, uint32_t cr2, uint32_t esp);

#endif
