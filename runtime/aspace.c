#include "runtime/aspace.h"

#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "kernel/memory.h"
#include "runtime/frames.h"

#define ENTRIES 1024u
#define PDE_OF(va) ((va) >> 22)
#define PTE_OF(va) (((va) >> 12) & (ENTRIES - 1))
#define USER_RW (PTE_P | PTE_W | PTE_U)

static struct aspace spaces[ASPACE_MAX];
static uint32_t next_id;

/* The shared frames are one contiguous block of kernel memory (not pool
 * frames: no space owns them), so the kernel reads the globals as one
 * structure. */
static struct {
    uint32_t table;
    uint32_t base;
    uint32_t pages;
} shared;

bool shared_region_init(uint32_t pages)
{
    if (pages > U_SHARED_MAX_PAGES)
        pages = U_SHARED_MAX_PAGES;
    shared.pages = 0;
    shared.base = (uint32_t)memory_alloc(pages * U_PAGE, U_PAGE);
    shared.table = shared.base ? frame_alloc_zeroed() : 0;
    if (!shared.table)
        return false;
    rep_stosd((void *)shared.base, 0, pages * U_PAGE / 4);
    uint32_t *t = (uint32_t *)shared.table;
    for (uint32_t i = 0; i < pages; i++)
        t[PTE_OF(U_SHARED) + i] = (shared.base + i * U_PAGE) | USER_RW;
    shared.pages = pages;
    next_id = 0;
    return true;
}

void shared_region_free(void)
{
    frame_free(shared.table);
    shared.table = 0;
    shared.pages = 0;
}

uint32_t shared_region_pages(void) { return shared.pages; }
uint32_t shared_region_frame(uint32_t i) { return i < shared.pages ? shared.base + i * U_PAGE : 0; }

void *shared_region_kernel(uint32_t va)
{
    return shared_region_index(va) < 0 ? 0 : (void *)(shared.base + (va - U_SHARED));
}

int32_t shared_region_index(uint32_t va)
{
    if (va < U_SHARED || va >= U_SHARED + shared.pages * U_PAGE)
        return -1;
    return (int32_t)((va - U_SHARED) / U_PAGE);
}

/* A commit-mode view: the same frames, writable only in the sync page, so
 * the first write to any other shared page faults and is twinned. */
static uint32_t private_view(void)
{
    uint32_t table = frame_alloc();
    if (!table)
        return 0;
    rep_movsd((void *)table, (const void *)shared.table, ENTRIES);
    uint32_t *t = (uint32_t *)table;
    for (uint32_t i = U_SYNC_PAGES; i < shared.pages; i++)
        t[PTE_OF(U_SHARED) + i] &= ~PTE_W;
    return table;
}

struct aspace *aspace_new(bool view)
{
    struct aspace *as = 0;
    for (uint32_t i = 0; i < ASPACE_MAX && !as; i++)
        if (!spaces[i].in_use)
            as = &spaces[i];
    if (!as)
        return 0;
    uint32_t dir = frame_alloc_zeroed();
    uint32_t table = dir && view ? private_view() : shared.table;
    if (!dir || !table) {
        frame_free(dir);
        return 0;
    }
    *as = (struct aspace){ .dir = (uint32_t *)dir, .id = ++next_id, .private_view = view, .in_use = true };
    spin_init(&as->lock, SPIN_TICKET, false);
    /* The kernel half: the identity directory of the page size in use. Its
     * tables are shared, so PDE 0 may say user: only the ring-3 code pages
     * in that table say user too. */
    const uint32_t *kernel = paging_directory(paging_current_size());
    bool kernel_global = paging_global_pages(); /* every identity-map table is global where PGE exists */
    pde_write(&as->dir[0], kernel[0] | PTE_U, kernel_global);
    /* The directory is zeroed already: only the kernel's present entries
     * need copying (each is announced to the model, docs/MODEL.md). */
    for (uint32_t pde = 1; pde < PDE_OF(U_WINDOW); pde++)
        if (kernel[pde])
            pde_write(&as->dir[pde], kernel[pde], kernel_global);
    pde_write(&as->dir[PDE_OF(U_SHARED)], table | USER_RW, false);
    return as;
}

void aspace_free(struct aspace *as)
{
    for (uint32_t pde = PDE_OF(U_WINDOW); pde < ENTRIES; pde++) {
        uint32_t e = as->dir[pde];
        if (!(e & PTE_P) || (e & PTE_PS))
            continue; /* large pages map benchmark buffers, never pool frames */
        if (pde == PDE_OF(U_SHARED) && !as->private_view)
            continue; /* the world's table */
        uint32_t *t = (uint32_t *)(e & PTE_ADDR_MASK);
        for (uint32_t i = 0; i < ENTRIES; i++)
            if ((t[i] & (PTE_P | PTE_OWNED)) == (PTE_P | PTE_OWNED))
                frame_free(t[i] & PTE_ADDR_MASK);
        frame_free((uint32_t)t);
    }
    frame_free((uint32_t)as->dir);
    as->in_use = false;
}

static uint32_t *table_for(struct aspace *as, uint32_t va, bool make)
{
    uint32_t *pde = &as->dir[PDE_OF(va)];
    if (*pde & PTE_PS)
        return 0;
    if (!(*pde & PTE_P)) {
        uint32_t t = make ? frame_alloc_zeroed() : 0;
        if (!t)
            return 0;
        pde_write(pde, t | USER_RW, false);
    }
    return (uint32_t *)(*pde & PTE_ADDR_MASK);
}

uint32_t *aspace_pte(struct aspace *as, uint32_t va)
{
    uint32_t *t = table_for(as, va, false);
    return t ? &t[PTE_OF(va)] : 0;
}

bool aspace_map(struct aspace *as, uint32_t va, uint32_t pa, uint32_t flags)
{
    uint32_t *t = table_for(as, va, true);
    if (!t)
        return false;
    t[PTE_OF(va)] = (pa & PTE_ADDR_MASK) | (flags & PTE_FLAGS_MASK);
    return true;
}

bool aspace_map_large(struct aspace *as, uint32_t va, uint32_t pa, uint32_t flags)
{
    uint32_t *pde = &as->dir[PDE_OF(va)];
    if ((*pde & PTE_P) && !(*pde & PTE_PS))
        return false; /* a small-page table is there */
    pde_write(pde, (pa & ~(LARGE_PAGE_SIZE - 1)) | (flags & PTE_FLAGS_MASK) | PTE_PS, false);
    return true;
}

void aspace_unmap(struct aspace *as, uint32_t va, uint32_t pages)
{
    for (uint32_t i = 0; i < pages; i++, va += U_PAGE) {
        uint32_t *pte = aspace_pte(as, va);
        if (!pte || !(*pte & PTE_P))
            continue;
        if (*pte & PTE_OWNED)
            frame_free(*pte & PTE_ADDR_MASK);
        *pte = 0;
        if (read_cr3() == aspace_cr3(as))
            tlb_invalidate(va);
    }
}

bool aspace_map_new(struct aspace *as, uint32_t va, uint32_t pages, uint32_t flags)
{
    for (uint32_t i = 0; i < pages; i++) {
        uint32_t f = frame_alloc_zeroed();
        if (!f || !aspace_map(as, va + i * U_PAGE, f, flags | PTE_OWNED)) {
            frame_free(f);
            aspace_unmap(as, va, i);
            return false;
        }
    }
    return true;
}

void aspace_add_region(struct aspace *as, enum region_kind kind, uint32_t lo, uint32_t hi)
{
    if (as->nregions < ASPACE_REGIONS)
        as->regions[as->nregions++] = (struct uregion){ lo, hi, kind };
}

const struct uregion *aspace_region_at(const struct aspace *as, uint32_t va)
{
    for (uint32_t i = 0; i < as->nregions; i++)
        if (va >= as->regions[i].lo && va < as->regions[i].hi)
            return &as->regions[i];
    return 0;
}

static uint32_t stack_base(uint32_t slot) { return aspace_stack_top(slot) - U_STACK_PAGES * U_PAGE; }

bool aspace_stack_map(struct aspace *as, uint32_t slot)
{
    if (slot >= U_STACK_SLOTS || (as->stack_slots & ((uint64_t)1 << slot)) ||
        !aspace_map_new(as, stack_base(slot), U_STACK_PAGES, USER_RW))
        return false;
    as->stack_slots |= (uint64_t)1 << slot;
    return true;
}

int32_t aspace_stack_new(struct aspace *as)
{
    for (uint32_t slot = 0; slot < U_STACK_SLOTS; slot++)
        if (!(as->stack_slots & ((uint64_t)1 << slot)))
            return aspace_stack_map(as, slot) ? (int32_t)slot : -1;
    return -1;
}

void aspace_stack_free(struct aspace *as, uint32_t slot)
{
    aspace_unmap(as, stack_base(slot), U_STACK_PAGES);
    as->stack_slots &= ~((uint64_t)1 << slot);
}

void aspace_stack_copy(struct aspace *dst, uint32_t dst_slot, struct aspace *src, uint32_t src_slot)
{
    for (uint32_t i = 0; i < U_STACK_PAGES; i++) {
        uint32_t *from = aspace_pte(src, stack_base(src_slot) + i * U_PAGE);
        uint32_t *to = aspace_pte(dst, stack_base(dst_slot) + i * U_PAGE);
        if (from && to && (*from & PTE_P) && (*to & PTE_P))
            rep_movsd((void *)(*to & PTE_ADDR_MASK), (const void *)(*from & PTE_ADDR_MASK), U_PAGE / 4);
    }
}

struct uself *aspace_self_block(struct aspace *as, uint32_t slot)
{
    uint32_t top = aspace_stack_top(slot);
    uint32_t *pte = aspace_pte(as, top - U_PAGE);
    if (!pte || !(*pte & PTE_P))
        return 0;
    return (struct uself *)((*pte & PTE_ADDR_MASK) + U_PAGE - sizeof(struct uself));
}

void aspace_lock(struct aspace *as)
{
    spin_lock(&as->lock);
    as->lock_taken++;
}

void aspace_unlock(struct aspace *as) { spin_unlock(&as->lock); }
