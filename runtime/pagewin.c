#include "runtime/pagewin.h"

#include "arch/idt.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "kernel/memory.h"
#include "lib/string.h"

#define ENTRIES 1024u
#define SLOTS_MAX 64u

/* An empty slot in both identity directories (whichever is in use, the
 * other may become so): from the top down, below the last. */
static uint32_t free_slots(uint32_t want, uint32_t out[])
{
    const uint32_t *d4k = paging_directory(PAGESIZE_4K), *d4m = paging_directory(PAGESIZE_4M);
    uint32_t n = 0;
    for (uint32_t pde = ENTRIES - 2; pde > 0 && n < want; pde--)
        if ((!d4k || !(d4k[pde] & PTE_P)) && (!d4m || !(d4m[pde] & PTE_P)))
            out[n++] = pde;
    return n;
}

const char *pagewin_unavailable(uint32_t windows)
{
    uint32_t slots[SLOTS_MAX];
    if (!paging_directory(PAGESIZE_4K))
        return "no page tables (paging could not be set up)";
    if (windows > SLOTS_MAX || free_slots(windows, slots) < windows)
        return "the identity map leaves too few empty 4 MiB slots for the windows";
    return 0;
}

uint32_t pagewin_slot(uint32_t i)
{
    uint32_t slots[SLOTS_MAX];
    uint32_t n = free_slots(i + 1 <= SLOTS_MAX ? i + 1 : SLOTS_MAX, slots);
    return n == i + 1 ? slots[i] << 22 : 0;
}

uint32_t *pagewin_dir_new(void)
{
    const uint32_t *kernel = paging_directory(paging_current_size());
    uint32_t *dir = memory_alloc(PAGE_SIZE, PAGE_SIZE);
    if (!kernel || !dir)
        return 0;
    bool global = paging_global_pages();
    memset(dir, 0, PAGE_SIZE); /* only the kernel's present entries need writing (and announcing) */
    for (uint32_t pde = 0; pde < ENTRIES; pde++)
        if (kernel[pde])
            pde_write(&dir[pde], kernel[pde], global);
    return dir;
}

uint32_t *pagewin_table(uint32_t *dir, uint32_t va)
{
    uint32_t *table = memory_alloc(PAGE_SIZE, PAGE_SIZE);
    if (!table)
        return 0;
    memset(table, 0, PAGE_SIZE);
    pde_write(&dir[va >> 22], (uint32_t)table | PTE_P | PTE_W, false);
    return table;
}

static bool (*fault_fn)(uint32_t va, bool write);

static bool window_fault(struct trapframe *tf)
{
    uint32_t va = read_cr2();
    return !(tf->err & PF_PRESENT) && fault_fn && fault_fn(va, (tf->err & PF_WRITE) != 0);
}

void pagewin_on_fault(bool (*fn)(uint32_t va, bool write))
{
    fault_fn = fn;
    exc_register(EXC_PF, 0, fn ? window_fault : 0);
}
