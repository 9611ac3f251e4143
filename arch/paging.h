/* Identity-mapped paging that can be switched on and off at run time, so
 * one boot measures the same benchmark both ways.
 *
 * Two directories map [4 KiB, memory_top) one to one: one with 4 KiB pages
 * throughout, one (where PSE exists) with 4 MiB pages above the first
 * 4 MiB. Page 0 stays unmapped so a null pointer faults once paging is on,
 * and so does the guard page below the boot stack (boot/boot.asm).
 * Global pages are used where PGE exists; CR0.WP is set so the kernel
 * itself faults on read-only pages. */
#ifndef ARCH_PAGING_H
#define ARCH_PAGING_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/pse36.h"
#include "lib/config.h"

/* Page-aligned memory for page tables, or NULL (kernel/memory.c). */
typedef void *(*paging_alloc_fn)(uint32_t size, uint32_t align);
/* Builds the 4 KiB directory (and the 4 MiB one if PSE exists), its tables
 * from alloc. False when the page tables do not fit in memory. */
bool paging_init(uint32_t map_top, paging_alloc_fn alloc);
/* An uncached identity page for a device's registers above the RAM the
 * map covers (the local APIC), in both directories. False when its 4 MiB
 * slot is RAM in a large page, or no table fits. */
bool paging_map_mmio(uint32_t pa);
bool paging_supports(enum page_size ps);
/* NULL when paging with these pages can be switched on, else why not. */
const char *paging_unavailable(enum page_size ps);
void paging_enable(enum page_size ps);
void paging_disable(void);
bool paging_enabled(void);
/* What result records say in params.paging: "on", "off" ("host" in the
 * hosted build, where the host's paging is always on). */
const char *paging_mode_name(void);
enum page_size paging_current_size(void);
/* The identity directory of this page size (NULL if not built): the kernel
 * half that every thread's directory copies. */
uint32_t *paging_directory(enum page_size ps);
/* True when the ring-3 code pages are mapped user-accessible (they must lie
 * in the first 4 MiB, whose small-page table every directory shares). */
bool paging_user_text_mapped(void);
/* Global pages (CR4.PGE) on or off while paging is on; where PGE exists. */
void paging_set_global(bool on);
bool paging_global_on(void);
/* Entry-level changes in the 4 KiB directory (with invlpg when paging is on):
 * flags are PTE_* bits; the physical address stays the identity. */
void paging_set_flags(uint32_t va, uint32_t flags);
uint32_t paging_get_flags(uint32_t va);
/* The flags of an ordinary identity-mapped kernel page (present, writable, global). */
uint32_t paging_kernel_flags(void);
/* 4 MiB slots of the large-page directory that span two memory types
 * (arch/memtype.h) and are therefore mapped with the 4 KiB directory's
 * table instead of one 4 MiB page. */
uint32_t paging_large_pages_split(void);
/* Bytes the page tables took. */
uint32_t paging_table_bytes(void);
bool paging_global_pages(void);

/* Physical address bits a PSE-36 4 MiB page reaches on this CPU (its width,
 * at most PSE36_MAX_BITS), 0 without PSE and PSE-36. Raw CPUID: callable
 * before cpu_identify. */
uint32_t paging_pse36_bits(void);
/* Memory above 4 GiB (a framebuffer there, kernel/fbcon.c): a directory
 * with the 4 MiB identity directory's entries and the window w
 * (arch/pse36.h), built after paging_init; NULL, or why not. Entered only
 * while paging is off, and left at once: paging is then off again and the
 * TLB clean. */
struct paging_window {
    uint32_t *dir;
};
const char *paging_window_build(const struct pse36_window *w, struct paging_window *out);
bool paging_window_enter(const struct paging_window *pw);
void paging_window_leave(void);

#endif
