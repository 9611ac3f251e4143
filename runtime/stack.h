/* Fiber stacks with an unmapped guard page below each: once paging is on
 * (4 KiB pages, or the first 4 MiB with 4 MiB pages), an overflow faults
 * into the guard and the fault record names the fiber, instead of
 * corrupting whatever lies below. */
#ifndef RUNTIME_STACK_H
#define RUNTIME_STACK_H

#include <stdbool.h>
#include <stdint.h>

struct fiber_stack {
    uint32_t guard;   /* address of the guard page (0: none) */
    uint32_t base;    /* lowest usable byte */
    uint32_t size;    /* usable bytes */
    const char *owner;
};

#define FIBER_STACK_DEFAULT (16u << 10)

/* Takes memory from the allocator (kernel/memory.h); false if it does not fit. */
bool fiber_stack_alloc(struct fiber_stack *s, uint32_t size, const char *owner);
/* Maps the guard page again; call before the memory is released. */
void fiber_stack_free(struct fiber_stack *s);
static inline uint32_t fiber_stack_top(const struct fiber_stack *s) { return s->base + s->size; }
/* The stack whose guard page holds addr, or NULL. */
const struct fiber_stack *fiber_stack_guarding(uint32_t addr);

#endif
