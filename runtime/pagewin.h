/* Page directories of their own for the multi-CPU paging benchmarks (bench
 * shootdown, aslock): each a copy of the kernel's identity directory in
 * the page size in use, the local APIC's page included (every CPU needs it
 * for IPIs and their EOI; runtime/aspace.h's spaces copy only what lies
 * below U_WINDOW), plus windows: 4 MiB slots the identity map leaves empty,
 * each given a page table of its own whose entries the benchmark writes.
 * Directories and tables come from memory_alloc: a memory mark around
 * the benchmark gives them back (after every CPU has left them: a CPU
 * keeps the CR3 it last adopted until its next smp_post).
 *
 * The hosted build has none of this (hosted/pagewin.c): a process cannot
 * change its page tables; pagewin_unavailable says so. */
#ifndef RUNTIME_PAGEWIN_H
#define RUNTIME_PAGEWIN_H

#include <stdbool.h>
#include <stdint.h>

#define PAGEWIN_BYTES (4u << 20)
#define PAGEWIN_PAGES 1024u

/* NULL when paging is on and `windows` empty slots exist, else why not. */
const char *pagewin_unavailable(uint32_t windows);
/* The address of the i-th empty slot (0 .. windows-1), the same in every
 * directory made here. */
uint32_t pagewin_slot(uint32_t i);
/* A copy of the identity directory in use; NULL when memory is short. */
uint32_t *pagewin_dir_new(void);
/* A zeroed page table for the window at va (a pagewin_slot) in dir: its
 * 1024 entries, or NULL when memory is short. */
uint32_t *pagewin_table(uint32_t *dir, uint32_t va);
/* A page fault inside any window, on any CPU, calls fn(va, write): true
 * when it mapped the page (the access is retried). NULL: none. */
void pagewin_on_fault(bool (*fn)(uint32_t va, bool write));

#endif
