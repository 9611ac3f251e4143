#include "arch/pse36.h"

#include "arch/mmu.h"

#define HIGH_BITS_MASK 0xffu /* address bits 39:32 */

static uint64_t reach(uint32_t phys_bits)
{
    return (uint64_t)1 << (phys_bits < PSE36_MAX_BITS ? phys_bits : PSE36_MAX_BITS);
}

bool pse36_pde(uint64_t pa, uint32_t phys_bits, uint32_t flags, uint32_t *entry)
{
    if (pa & (PSE36_PAGE - 1) || phys_bits < 32 || pa + PSE36_PAGE > reach(phys_bits))
        return false;
    uint32_t high = (uint32_t)(pa >> 32) & HIGH_BITS_MASK;
    *entry = (uint32_t)pa | high << PSE36_HIGH_SHIFT | flags | PTE_PS;
    return true;
}

uint64_t pse36_pde_address(uint32_t pde)
{
    return (uint64_t)(pde & ~(PSE36_PAGE - 1)) | (uint64_t)(pde >> PSE36_HIGH_SHIFT & HIGH_BITS_MASK) << 32;
}

const char *pse36_window_plan(uint64_t pa, uint64_t len, uint32_t low_top, uint32_t phys_bits,
                              struct pse36_window *w)
{
    if (phys_bits == 0)
        return "the framebuffer lies above 4 GiB and this CPU has no PSE-36 to map it with 4 MiB pages";
    if (pa + len > reach(phys_bits))
        return "the framebuffer lies beyond the physical addresses a PSE-36 4 MiB page reaches on this CPU";
    w->pa_base = pa & ~(uint64_t)(PSE36_PAGE - 1);
    uint64_t slots = (pa + len - w->pa_base + PSE36_PAGE - 1) / PSE36_PAGE;
    w->first_slot = (uint32_t)(((uint64_t)low_top + PSE36_PAGE - 1) / PSE36_PAGE);
    if (len == 0 || w->first_slot + slots > PSE36_SLOTS)
        return "the framebuffer is larger than the virtual space above RAM and below 4 GiB";
    w->slots = (uint32_t)slots;
    w->va = w->first_slot * PSE36_PAGE + (uint32_t)(pa - w->pa_base);
    return 0;
}
