#include "runtime/stack.h"

#include "arch/mmu.h"
#include "arch/paging.h"
#include "kernel/memory.h"

#define MAX_GUARDED 128

/* Live guarded stacks, for naming the fiber in a fault record. */
static const struct fiber_stack *guarded[MAX_GUARDED];

static void track(const struct fiber_stack *s, bool add)
{
    for (int i = 0; i < MAX_GUARDED; i++) {
        if (add && !guarded[i]) {
            guarded[i] = s;
            return;
        }
        if (!add && guarded[i] == s) {
            guarded[i] = 0;
            return;
        }
    }
}

bool fiber_stack_alloc(struct fiber_stack *s, uint32_t size, const char *owner)
{
    size = (size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    void *mem = memory_alloc(size + PAGE_SIZE, PAGE_SIZE);
    if (!mem)
        return false;
    s->guard = (uint32_t)mem;
    s->base = s->guard + PAGE_SIZE;
    s->size = size;
    s->owner = owner;
    paging_set_flags(s->guard, 0);
    track(s, true);
    return true;
}

void fiber_stack_free(struct fiber_stack *s)
{
    if (!s->guard)
        return;
    paging_set_flags(s->guard, paging_kernel_flags());
    track(s, false);
    s->guard = 0;
}

const struct fiber_stack *fiber_stack_guarding(uint32_t addr)
{
    for (int i = 0; i < MAX_GUARDED; i++)
        if (guarded[i] && addr >= guarded[i]->guard && addr < guarded[i]->guard + PAGE_SIZE)
            return guarded[i];
    return 0;
}
