/* One page as k CPUs see it: as threads of one address space (every CPU
 * reaches the same frame) or as isolated address spaces (Dthreads,
 * Sheriff, PATHREADS: each CPU reaches a frame of its own at the same
 * virtual address). A view is an address space equal to the kernel's
 * identity map except for one page, `va`, which it backs with `frame`.
 *
 * The kernel builds a page directory per view (a copy of the 4 KiB
 * identity directory; a copy of the one page table that holds va, its
 * entry pointing at frame, not global), and a CPU enters a view by loading
 * its CR3 (and invlpg va, in case a global entry of the identity map is in
 * its TLB): the isolation is the address space's, in ring 0. The hosted
 * build has one address space for every thread (Linux shares the page
 * tables of a process), so a view is the frame itself at its own address:
 * what the caches see is the same (one frame per CPU), what the TLB sees
 * is not (docs/RESULTS.md says what that leaves out). */
#ifndef RUNTIME_PAGEVIEW_H
#define RUNTIME_PAGEVIEW_H

#include <stdbool.h>
#include <stdint.h>

struct pageview {
    uint32_t cr3; /* the view's directory (kernel), 0 hosted */
    uint8_t *va;  /* where the view shows the page (kernel: va; hosted: the frame) */
};

/* NULL when views can be made here, else why not (the kernel needs paging
 * on: the benchmark runs in the paging pass). */
const char *pageview_unavailable(void);
/* A view in which the page at va (4 KiB aligned, never touched through the
 * identity map) is backed by frame (4 KiB aligned). The directory and the
 * table come from memory_alloc (the caller's memory_mark gives them back).
 * False when they do not fit. */
bool pageview_make(struct pageview *v, void *va, void *frame);
/* On the CPU that uses it (several CPUs may enter one view): switches to
 * the view and returns the page; *before gets what pageview_leave needs. */
volatile uint32_t *pageview_enter(const struct pageview *v, uint32_t *before);
/* Back to the address space the CPU had before pageview_enter. */
void pageview_leave(uint32_t before);

#endif
