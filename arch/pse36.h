/* PSE-36 (Intel SDM vol. 3A, 4.3 "32-bit paging", table 4-4; AMD APM vol. 2,
 * 5.2.4): with CR4.PSE set and PAE off, a PDE with PS set maps a 4 MiB page
 * whose physical address bits 31:22 sit in the PDE's bits 31:22 and bits
 * 39:32 in its bits 20:13, as many of them as the CPU has address bits (the
 * rest are reserved: 0). That reaches a framebuffer the firmware put above
 * 4 GiB (Above-4G decoding, Resizable BAR) from this 32-bit kernel without
 * PAE: kernel/fbcon.c draws it through a window of such pages that
 * arch/paging.c switches on only while drawing. Portable and pure: the
 * entries and the window's place are unit-tested (tests/unit/test_pse36.c). */
#ifndef ARCH_PSE36_H
#define ARCH_PSE36_H

#include <stdbool.h>
#include <stdint.h>

#define PSE36_MAX_BITS 40   /* bits 20:13 hold address bits 39:32 */
#define PSE36_HIGH_SHIFT 13 /* where address bit 32 goes in the PDE */
#define PSE36_PAGE (4u << 20)
#define PSE36_SLOTS 1024u   /* PDEs in a directory: 4 MiB of virtual space each */

/* The PDE mapping the 4 MiB page at pa with flags (PTE_PS is added); false
 * when pa is not 4 MiB aligned or lies beyond what phys_bits (the CPU's
 * physical address width) reaches through PSE-36. */
bool pse36_pde(uint64_t pa, uint32_t phys_bits, uint32_t flags, uint32_t *entry);
/* The physical address a 4 MiB PDE maps, its PSE-36 bits included. */
uint64_t pse36_pde_address(uint32_t pde);

/* A window of 4 MiB pages onto [pa, pa + len) in the virtual space above the
 * identity map, below 4 GiB. */
struct pse36_window {
    uint32_t first_slot; /* its first PDE */
    uint32_t slots;      /* its PDEs: 4 MiB each */
    uint64_t pa_base;    /* what the first maps: pa rounded down to 4 MiB */
    uint32_t va;         /* where pa itself appears */
};

/* Plans the window, its first slot the first wholly above low_top (the end
 * of the identity map). NULL, or why it cannot be: no PSE-36 (phys_bits
 * 0), the range past the CPU's reach, no room below 4 GiB. */
const char *pse36_window_plan(uint64_t pa, uint64_t len, uint32_t low_top, uint32_t phys_bits,
                              struct pse36_window *w);

#endif
