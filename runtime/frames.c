#include "runtime/frames.h"

#include "arch/mmu.h"
#include "arch/x86.h"
#include "kernel/memory.h"

static struct {
    uint32_t base, count;
    uint32_t *free; /* a stack of free frame numbers: LIFO, so runs repeat exactly */
    uint32_t nfree;
} pool;

bool frames_init(uint32_t count)
{
    pool.base = (uint32_t)memory_alloc(count * PAGE_SIZE, PAGE_SIZE);
    pool.free = memory_alloc(count * (uint32_t)sizeof(uint32_t), 4);
    if (!pool.base || !pool.free) {
        pool.count = pool.nfree = 0;
        return false;
    }
    pool.count = count;
    for (uint32_t i = 0; i < count; i++)
        pool.free[i] = count - 1 - i; /* lowest frames first */
    pool.nfree = count;
    return true;
}

uint32_t frame_alloc(void)
{
    if (!pool.nfree)
        return 0;
    return pool.base + pool.free[--pool.nfree] * PAGE_SIZE;
}

uint32_t frame_alloc_zeroed(void)
{
    uint32_t pa = frame_alloc();
    if (pa)
        rep_stosd((void *)pa, 0, PAGE_SIZE / 4);
    return pa;
}

bool frame_in_pool(uint32_t pa)
{
    return pool.count && pa >= pool.base && pa < pool.base + pool.count * PAGE_SIZE && !(pa & (PAGE_SIZE - 1));
}

void frame_free(uint32_t pa)
{
    if (frame_in_pool(pa) && pool.nfree < pool.count)
        pool.free[pool.nfree++] = (pa - pool.base) / PAGE_SIZE;
}

uint32_t frames_in_use(void) { return pool.count - pool.nfree; }
uint32_t frames_total(void) { return pool.count; }
