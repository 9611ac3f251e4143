/* Address spaces of the ring-3 threads: a page directory each, with the
 * kernel's identity map copied below U_WINDOW and the regions of
 * runtime/uabi.h above it. Every page table and frame comes from the frame
 * pool (runtime/frames.h); a frame the space owns carries PTE_OWNED and
 * goes back to the pool with the space.
 *
 * The shared region (sync page, globals, heap) is one table the world
 * makes once: direct-mode spaces all point at it; a commit-mode space gets a
 * private view of it (the same frames, read-only except the sync page),
 * whose entries the twin code (runtime/twin.h) redirects to working copies.
 *
 * Each space has its own lock, the model of Linux's per-process mmap_sem:
 * map, unmap and demand faults take it. Threads that share one space share
 * it; isolated spaces never touch each other's. */
#ifndef RUNTIME_ASPACE_H
#define RUNTIME_ASPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/spinlock.h"
#include "runtime/uabi.h"

#define ASPACE_MAX 72
#define ASPACE_REGIONS 4

enum region_kind {
    REGION_DEMAND,       /* not present until touched: a zeroed frame is mapped on the fault */
    REGION_FIX_ON_WRITE, /* read-only until written: the fault makes the page writable */
};

struct uregion {
    uint32_t lo, hi;
    enum region_kind kind;
};

struct twin_page;

struct aspace {
    uint32_t *dir;
    uint32_t id;
    uint32_t users;           /* threads living in it */
    uint64_t stack_slots;     /* bit k: stack slot k in use */
    struct spinlock lock;     /* the address-space lock */
    uint32_t lock_taken;      /* its acquisitions: the lock traffic */
    bool private_view;        /* commit mode: its own view of the shared table */
    struct twin_page *twins;  /* commit mode: pages written in this transaction (one frame) */
    uint32_t ntwins;
    struct uregion regions[ASPACE_REGIONS];
    uint32_t nregions;
    bool in_use;
};

/* The shared region, for every space of the world: `pages` zeroed pages
 * at U_SHARED (at most U_SHARED_MAX_PAGES), in one block of kernel memory
 * (kernel/memory.h: the caller's mark gives it back). False when memory or
 * the pool is short. */
bool shared_region_init(uint32_t pages);
void shared_region_free(void);
uint32_t shared_region_pages(void);
/* The shared frame of page i of the region. */
uint32_t shared_region_frame(uint32_t i);
/* Index of the shared page holding va, or -1 when va is not in the region. */
int32_t shared_region_index(uint32_t va);
/* Where the kernel reaches the shared byte at user address va (NULL when
 * va is not in the region): how it reads and writes the programs' globals. */
void *shared_region_kernel(uint32_t va);

/* A new space; private_view: commit mode. NULL when out of frames or slots. */
struct aspace *aspace_new(bool private_view);
/* Gives back every owned frame and table (twins must be gone: twin_discard). */
void aspace_free(struct aspace *as);
static inline uint32_t aspace_cr3(const struct aspace *as) { return (uint32_t)as->dir; }

/* Maps one 4 KiB page (flags: PTE_* bits, PTE_P included). False when a
 * page table cannot be had. */
bool aspace_map(struct aspace *as, uint32_t va, uint32_t pa, uint32_t flags);
/* One 4 MiB page (needs PSE); va and pa 4 MiB aligned. */
bool aspace_map_large(struct aspace *as, uint32_t va, uint32_t pa, uint32_t flags);
/* The entry mapping va, or NULL when va has no page table. */
uint32_t *aspace_pte(struct aspace *as, uint32_t va);
/* `pages` fresh zeroed frames the space owns, from va. False (and nothing
 * mapped) when the pool runs dry. */
bool aspace_map_new(struct aspace *as, uint32_t va, uint32_t pages, uint32_t flags);
/* Unmaps `pages` from va, giving owned frames back. */
void aspace_unmap(struct aspace *as, uint32_t va, uint32_t pages);
void aspace_add_region(struct aspace *as, enum region_kind kind, uint32_t lo, uint32_t hi);
const struct uregion *aspace_region_at(const struct aspace *as, uint32_t va);

/* Stacks: slot `slot` mapped (U_STACK_PAGES fresh frames); false when it
 * is taken or the pool is empty. aspace_stack_new: the lowest free slot, or -1. */
bool aspace_stack_map(struct aspace *as, uint32_t slot);
int32_t aspace_stack_new(struct aspace *as);
void aspace_stack_free(struct aspace *as, uint32_t slot);
static inline uint32_t aspace_stack_top(uint32_t slot) { return U_STACK_TOP - slot * U_STACK_SLOT; }
/* The stack of (src, src_slot) copied into (dst, dst_slot), page by page. */
void aspace_stack_copy(struct aspace *dst, uint32_t dst_slot, struct aspace *src, uint32_t src_slot);
/* The thread block at the top of a slot, through its frame. */
struct uself *aspace_self_block(struct aspace *as, uint32_t slot);

void aspace_lock(struct aspace *as);
void aspace_unlock(struct aspace *as);

#endif
