#include "runtime/pageview.h"

#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "kernel/memory.h"
#include "lib/string.h"

#define ENTRIES 1024u

const char *pageview_unavailable(void)
{
    if (!paging_supports(PAGESIZE_4K))
        return "not enough memory for the page tables";
    if (!paging_enabled())
        return "needs paging on (a page directory per CPU)";
    return 0;
}

bool pageview_make(struct pageview *v, void *va, void *frame)
{
    const uint32_t *kernel = paging_directory(PAGESIZE_4K);
    uint32_t a = (uint32_t)va, pde = a >> 22;
    if (!kernel || !(kernel[pde] & PTE_P) || (kernel[pde] & PTE_PS))
        return false;
    uint32_t *dir = memory_alloc(PAGE_SIZE, PAGE_SIZE), *table = memory_alloc(PAGE_SIZE, PAGE_SIZE);
    if (!dir || !table)
        return false;
    memcpy(table, (const void *)(kernel[pde] & PTE_ADDR_MASK), PAGE_SIZE);
    table[(a >> 12) & (ENTRIES - 1)] = (uint32_t)frame | PTE_P | PTE_W; /* not global: CR3 loads drop it */
    memset(dir, 0, PAGE_SIZE);
    bool global = paging_global_pages(); /* every identity-map table is global where PGE exists */
    for (uint32_t i = 0; i < ENTRIES; i++)
        if (kernel[i] && i != pde)
            pde_write(&dir[i], kernel[i], global);
    pde_write(&dir[pde], (uint32_t)table | (kernel[pde] & ~PTE_ADDR_MASK), false);
    *v = (struct pageview){ .cr3 = (uint32_t)dir, .va = va };
    return true;
}

volatile uint32_t *pageview_enter(const struct pageview *v, uint32_t *before)
{
    *before = read_cr3();
    cr3_load(v->cr3);
    tlb_invalidate((uint32_t)v->va); /* a global identity entry for va would survive the CR3 load */
    return (volatile uint32_t *)v->va;
}

void pageview_leave(uint32_t before) { cr3_load(before); }
