#include "arch/paging.h"

#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/mtrr.h"
#include "arch/pse36.h"
#include "arch/x86.h"
#include "lib/string.h"

#define ENTRIES 1024

extern char boot_stack_guard[];
extern char _user_start[], _user_end[];

static uint32_t *dir_4k, *dir_4m;
static uint32_t table_bytes;
static uint32_t large_split;
static bool split_pde[ENTRIES];
static bool enabled, global_ok;
static enum page_size current = PAGESIZE_4K;

static paging_alloc_fn table_alloc;

static uint32_t *alloc_table(void)
{
    uint32_t *t = table_alloc(PAGE_SIZE, PAGE_SIZE);
    if (t) {
        memset(t, 0, PAGE_SIZE);
        table_bytes += PAGE_SIZE;
    }
    return t;
}

/* Page tables for [0, top) with 4 KiB pages into dir, starting at pde. */
static bool map_small(uint32_t *dir, uint32_t from_pde, uint32_t top, uint32_t g)
{
    for (uint32_t pde = from_pde; pde < ENTRIES && (uint64_t)pde * LARGE_PAGE_SIZE < top; pde++) {
        uint32_t *pt = alloc_table();
        if (!pt)
            return false;
        for (uint32_t i = 0; i < ENTRIES; i++) {
            uint32_t pa = pde * LARGE_PAGE_SIZE + i * PAGE_SIZE;
            if (pa >= top)
                break;
            if (pa != 0)
                pt[i] = pa | PTE_P | PTE_W | g;
        }
        pde_write(&dir[pde], (uint32_t)pt | PTE_P | PTE_W, g != 0);
    }
    return true;
}

bool paging_init(uint32_t map_top, paging_alloc_fn alloc)
{
    table_alloc = alloc;
    uint32_t top = (map_top + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    global_ok = cpu_has(FEAT_PGE);
    uint32_t g = global_ok ? PTE_G : 0;
    /* Always cover the first 4 MiB (kernel, VGA, BIOS data) */
    if (top < LARGE_PAGE_SIZE)
        top = LARGE_PAGE_SIZE;
    dir_4k = alloc_table();
    if (!dir_4k || !map_small(dir_4k, 0, top, g))
        return false;
    paging_set_flags((uint32_t)boot_stack_guard, 0); /* both maps share this table */
    /* Ring-3 code (linker.ld's .utext): user-accessible, read-only. Only
     * the threads' directories let ring 3 through to this table (their
     * PDE 0 has PTE_U); the kernel's do not. */
    for (uint32_t va = (uint32_t)_user_start; va < (uint32_t)_user_end; va += PAGE_SIZE)
        paging_set_flags(va, PTE_P | PTE_U | g);
    if (cpu_has(FEAT_PSE)) {
        dir_4m = alloc_table();
        if (!dir_4m)
            return false;
        pde_write(&dir_4m[0], dir_4k[0], g != 0); /* first 4 MiB shares the small-page table */
        /* A large page over two memory types is undefined for the CPU
         * (SDM "Large Page Size Considerations"): such a slot shares the
         * 4 KiB directory's table, as the first 4 MiB does. */
        large_split = memtype_split_large_pages(mtrr_set(), 1, top, split_pde);
        for (uint32_t pde = 1; pde < ENTRIES && (uint64_t)pde * LARGE_PAGE_SIZE < top; pde++)
            pde_write(&dir_4m[pde], split_pde[pde] ? dir_4k[pde] : pde * LARGE_PAGE_SIZE | PTE_P | PTE_W | PTE_PS | g,
                      g != 0);
    }
    return true;
}

bool paging_map_mmio(uint32_t pa)
{
    uint32_t pde = pa >> 22, *pt;
    if (!dir_4k || (dir_4k[pde] & PTE_PS))
        return false;
    if (dir_4k[pde] & PTE_P) {
        pt = (uint32_t *)(dir_4k[pde] & PTE_ADDR_MASK);
    } else {
        if (!(pt = alloc_table()))
            return false;
        pde_write(&dir_4k[pde], (uint32_t)pt | PTE_P | PTE_W, false);
    }
    if (dir_4m && !(dir_4m[pde] & PTE_P))
        pde_write(&dir_4m[pde], dir_4k[pde], false);
    else if (dir_4m && (dir_4m[pde] & PTE_ADDR_MASK) != (uint32_t)pt)
        return false; /* RAM in 4 MiB pages there: no MMIO to map */
    pt[(pa >> 12) & (ENTRIES - 1)] = (pa & PTE_ADDR_MASK) | PTE_P | PTE_W | PTE_PCD | PTE_PWT;
    if (enabled)
        tlb_invalidate(pa);
    return true;
}

bool paging_supports(enum page_size ps) { return ps == PAGESIZE_4K ? dir_4k != 0 : dir_4m != 0; }
bool paging_enabled(void) { return enabled; }
const char *paging_mode_name(void) { return enabled ? "on" : "off"; }

const char *paging_unavailable(enum page_size ps)
{
    if (paging_supports(ps))
        return 0;
    if (ps == PAGESIZE_4M && !cpu_has(FEAT_PSE))
        return "4 MiB pages need PSE, which this CPU lacks";
    return "not enough memory for the page tables";
}
enum page_size paging_current_size(void) { return current; }

uint32_t *paging_directory(enum page_size ps) { return ps == PAGESIZE_4M ? dir_4m : dir_4k; }

bool paging_user_text_mapped(void)
{
    return dir_4k && (uint32_t)_user_end <= LARGE_PAGE_SIZE && (uint32_t)_user_end > (uint32_t)_user_start;
}

void paging_set_global(bool on)
{
    if (!global_ok || !enabled)
        return;
    uint32_t cr4 = read_cr4(), now = on ? cr4 | CR4_PGE : cr4 & ~CR4_PGE;
    write_cr4(now);
    /* Changing PGE flushes the whole TLB, global entries too: to the model
     * that is paging switched on again with the new PGE. */
    if (now != cr4)
        model_mark_paging_on(read_cr3(), now & CR4_PSE, now & CR4_PGE);
}

bool paging_global_on(void) { return enabled && (read_cr4() & CR4_PGE); }
uint32_t paging_table_bytes(void) { return table_bytes; }
uint32_t paging_large_pages_split(void) { return large_split; }
bool paging_global_pages(void) { return global_ok; }

void paging_enable(enum page_size ps)
{
    uint32_t *dir = ps == PAGESIZE_4M ? dir_4m : dir_4k;
    if (!dir)
        return;
    if (enabled)
        paging_disable();
    uint32_t cr4 = read_cr4();
    if (cpu_has(FEAT_PSE))
        cr4 |= CR4_PSE;
    if (global_ok)
        cr4 |= CR4_PGE;
    write_cr4(cr4);
    write_cr3((uint32_t)dir);
    gdt_set_double_fault_cr3((uint32_t)dir);
    write_cr0(read_cr0() | CR0_PG | CR0_WP);
    model_mark_paging_on((uint32_t)dir, cr4 & CR4_PSE, cr4 & CR4_PGE);
    enabled = true;
    current = ps;
}

void paging_disable(void)
{
    if (!enabled)
        return;
    write_cr0(read_cr0() & ~CR0_PG);
    model_mark_paging_off();
    /* Clearing PGE flushes global entries, so the next enable starts clean. */
    if (global_ok)
        write_cr4(read_cr4() & ~CR4_PGE);
    enabled = false;
}

static uint32_t *pte_of(uint32_t va)
{
    uint32_t pde = dir_4k ? dir_4k[va >> 22] : 0;
    if (!(pde & PTE_P) || (pde & PTE_PS))
        return 0;
    return &((uint32_t *)(pde & PTE_ADDR_MASK))[(va >> 12) & (ENTRIES - 1)];
}

void paging_set_flags(uint32_t va, uint32_t flags)
{
    uint32_t *pte = pte_of(va);
    if (!pte)
        return;
    *pte = (va & PTE_ADDR_MASK) | (flags & 0xfff);
    if (enabled)
        tlb_invalidate(va);
}

uint32_t paging_kernel_flags(void) { return PTE_P | PTE_W | (global_ok ? PTE_G : 0); }

uint32_t paging_get_flags(uint32_t va)
{
    uint32_t *pte = pte_of(va);
    return pte ? *pte & 0xfff : 0;
}

uint32_t paging_pse36_bits(void)
{
    if (!cpu_probe(FEAT_PSE) || !cpu_probe(FEAT_PSE36))
        return 0;
    uint32_t bits = cpu_phys_bits();
    return bits < PSE36_MAX_BITS ? bits : PSE36_MAX_BITS;
}

const char *paging_window_build(const struct pse36_window *w, struct paging_window *out)
{
    if (!dir_4m)
        return "no 4 MiB-page directory to copy (no PSE, or no memory for the page tables)";
    uint32_t bits = paging_pse36_bits(), entry;
    for (uint32_t i = 0; i < w->slots; i++) /* checked first: a refusal takes no memory */
        if (dir_4m[w->first_slot + i] || !pse36_pde(w->pa_base + (uint64_t)i * LARGE_PAGE_SIZE, bits, 0, &entry))
            return "the window's slots are taken, or beyond this CPU's PSE-36 reach";
    uint32_t *dir = table_alloc(PAGE_SIZE, PAGE_SIZE); /* not the identity maps' (mem.page_tables) */
    if (!dir)
        return "no memory for the window's page directory";
    memset(dir, 0, PAGE_SIZE);
    for (uint32_t pde = 0; pde < ENTRIES; pde++)
        if (dir_4m[pde])
            pde_write(&dir[pde], dir_4m[pde], global_ok);
    for (uint32_t i = 0; i < w->slots; i++) {
        pse36_pde(w->pa_base + (uint64_t)i * LARGE_PAGE_SIZE, bits, PTE_P | PTE_W, &entry);
        pde_write(&dir[w->first_slot + i], entry, false);
    }
    out->dir = dir;
    return 0;
}

bool paging_window_enter(const struct paging_window *pw)
{
    uint32_t *dir = pw->dir;
    if (!dir || enabled)
        return false;
    uint32_t cr4 = (read_cr4() | CR4_PSE) & ~CR4_PGE; /* PGE off: leaving flushes every entry */
    write_cr4(cr4);
    write_cr3((uint32_t)dir); /* a paging switch: it marks PAGING_ON itself */
    write_cr0(read_cr0() | CR0_PG);
    model_mark_paging_on((uint32_t)dir, true, false);
    return true;
}

void paging_window_leave(void)
{
    write_cr0(read_cr0() & ~CR0_PG);
    model_mark_paging_off();
}
