/* A process cannot switch paging off or on: those cases are skipped. Guard
 * pages still work, through mprotect. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "arch/mmu.h"
#include "arch/paging.h"

bool paging_init(uint32_t map_top, paging_alloc_fn alloc) { (void)map_top; (void)alloc; return false; }
bool paging_supports(enum page_size ps) { (void)ps; return false; }

const char *paging_unavailable(enum page_size ps)
{
    (void)ps;
    return "hosted: a Linux process cannot switch paging off or on (it always runs with the host's paging)";
}

void paging_enable(enum page_size ps) { (void)ps; }
void paging_disable(void) {}
bool paging_enabled(void) { return false; }
const char *paging_mode_name(void) { return "host"; }
enum page_size paging_current_size(void) { return PAGESIZE_4K; }
uint32_t paging_table_bytes(void) { return 0; }
uint32_t paging_large_pages_split(void) { return 0; }
bool paging_global_pages(void) { return false; }
uint32_t paging_kernel_flags(void) { return PTE_P | PTE_W; }

void paging_set_flags(uint32_t va, uint32_t flags)
{
    int prot = !(flags & PTE_P) ? PROT_NONE : (flags & PTE_W) ? PROT_READ | PROT_WRITE : PROT_READ;
    mprotect((void *)(va & PTE_ADDR_MASK), PAGE_SIZE, prot);
}

uint32_t paging_get_flags(uint32_t va) { (void)va; return PTE_P | PTE_W; }
