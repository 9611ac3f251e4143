#include "runtime/stackpool.h"

#include "kernel/memory.h"

bool stackpool_init(struct stackpool *p, uint32_t count, uint32_t stack_size)
{
    stack_size = (stack_size + 15) & ~15u;
    p->free_stacks = memory_alloc(count * (uint32_t)sizeof(uint32_t), 16);
    uint8_t *block = memory_alloc(count * stack_size, 4096);
    if (!p->free_stacks || !block)
        return false;
    p->base = (uint32_t)block;
    p->stack_size = stack_size;
    p->count = count;
    for (uint32_t i = 0; i < count; i++)
        p->free_stacks[i] = i;
    p->free_top = (int32_t)count - 1;
    return true;
}

bool stackpool_take(struct stackpool *p, struct fiber_stack *out)
{
    if (p->free_top < 0)
        return false;
    uint32_t index = p->free_stacks[p->free_top--];
    *out = (struct fiber_stack){ 0, p->base + index * p->stack_size, p->stack_size, "pool" };
    return true;
}

void stackpool_give(struct stackpool *p, const struct fiber_stack *s)
{
    p->free_stacks[++p->free_top] = (s->base - p->base) / p->stack_size;
}

uint32_t stackpool_free_count(const struct stackpool *p) { return (uint32_t)(p->free_top + 1); }

/* A free block's header; an allocated block keeps only `size`. */
struct firstfit_block {
    uint32_t size; /* of the whole block, header included */
    struct firstfit_block *next;
};

#define HEADER 16u /* keeps payloads 16-byte aligned */

bool firstfit_init(struct firstfit *a, uint32_t size)
{
    size &= ~15u;
    struct firstfit_block *b = memory_alloc(size, 16);
    if (!b)
        return false;
    *a = (struct firstfit){ (uint32_t)b, size, b, 0 };
    b->size = size;
    b->next = 0;
    return true;
}

void *firstfit_alloc(struct firstfit *a, uint32_t size)
{
    uint32_t need = ((size + 15) & ~15u) + HEADER;
    for (struct firstfit_block **link = &a->free_list; *link; link = &(*link)->next) {
        struct firstfit_block *b = *link;
        a->searched++;
        if (b->size < need)
            continue;
        if (b->size - need >= HEADER + 16) { /* split: the tail stays free */
            struct firstfit_block *rest = (struct firstfit_block *)((uint8_t *)b + need);
            rest->size = b->size - need;
            rest->next = b->next;
            b->size = need;
            *link = rest;
        } else {
            *link = b->next;
        }
        return (uint8_t *)b + HEADER;
    }
    return 0;
}

void firstfit_free(struct firstfit *a, void *p)
{
    struct firstfit_block *b = (struct firstfit_block *)((uint8_t *)p - HEADER);
    struct firstfit_block *prev = 0, *cur = a->free_list;
    while (cur && cur < b) { /* address order */
        prev = cur;
        cur = cur->next;
    }
    b->next = cur;
    if (prev)
        prev->next = b;
    else
        a->free_list = b;
    if (cur && (uint8_t *)b + b->size == (uint8_t *)cur) { /* merge with the next */
        b->size += cur->size;
        b->next = cur->next;
    }
    if (prev && (uint8_t *)prev + prev->size == (uint8_t *)b) { /* and the previous */
        prev->size += b->size;
        prev->next = b->next;
    }
}

bool firstfit_take_stack(struct firstfit *a, uint32_t stack_size, struct fiber_stack *out)
{
    void *p = firstfit_alloc(a, stack_size);
    if (!p)
        return false;
    *out = (struct fiber_stack){ 0, (uint32_t)p, (stack_size + 15) & ~15u, "firstfit" };
    return true;
}

void firstfit_give_stack(struct firstfit *a, const struct fiber_stack *s) { firstfit_free(a, (void *)s->base); }
