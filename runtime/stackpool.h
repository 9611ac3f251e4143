/* Two ways to get a fiber's stack, to compare (LiteThreads, Listings 1-2):
 *
 * stackpool: a fixed number of equal stacks carved from one block, and an
 * array of free stack indices used as a stack (FreeStacks, FreeStackTop):
 * taking and returning a stack is one array access, constant time.
 *
 * firstfit: a general allocator over one block: an address-ordered free
 * list searched for the first block that fits, split on allocation,
 * coalesced with its neighbours on free. Its cost grows with the number of
 * blocks outstanding. */
#ifndef RUNTIME_STACKPOOL_H
#define RUNTIME_STACKPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stack.h"

struct stackpool {
    uint32_t base, stack_size, count;
    uint32_t *free_stacks; /* indices of free stacks; a stack of them */
    int32_t free_top;      /* index of the top entry; -1 when exhausted */
};

/* count stacks of stack_size bytes, from the kernel's memory; false if they do not fit. */
bool stackpool_init(struct stackpool *p, uint32_t count, uint32_t stack_size);
/* False when the pool is exhausted (the caller gets a clear error, not a crash). */
bool stackpool_take(struct stackpool *p, struct fiber_stack *out);
void stackpool_give(struct stackpool *p, const struct fiber_stack *s);
uint32_t stackpool_free_count(const struct stackpool *p);

struct firstfit_block;

struct firstfit {
    uint32_t base, size;
    struct firstfit_block *free_list;
    uint32_t searched; /* free blocks visited by allocations, in all */
};

bool firstfit_init(struct firstfit *a, uint32_t size);
/* NULL when nothing fits. */
void *firstfit_alloc(struct firstfit *a, uint32_t size);
void firstfit_free(struct firstfit *a, void *p);
bool firstfit_take_stack(struct firstfit *a, uint32_t stack_size, struct fiber_stack *out);
void firstfit_give_stack(struct firstfit *a, const struct fiber_stack *s);

#endif
