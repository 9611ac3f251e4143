/* A set of free physical memory regions with a bump allocator in each.
 * Benchmarks take large aligned buffers from it and give them all back at
 * once (mark/release), so a sweep never fragments memory. Portable: the
 * multiboot glue lives in kernel/memory.c. */
#ifndef LIB_REGIONS_H
#define LIB_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

/* Free RAM below 4 GiB in separate pieces: a BIOS e820 map gives a handful,
 * a UEFI map (holes for runtime services, ACPI, MMIO) a few dozen at most.
 * Past this many the smallest pieces are dropped and counted (dropped,
 * dropped_bytes), and the mem record reports them as an error. */
#define REGIONS_MAX 64

struct region {
    uint64_t base, end; /* [base, end) */
    uint64_t next;      /* first byte not yet handed out */
};

struct region_set {
    struct region r[REGIONS_MAX];
    uint32_t n;
    uint32_t dropped;       /* regions that did not fit (the smallest go first) */
    uint64_t dropped_bytes; /* and the memory they held */
};

struct region_mark {
    uint64_t next[REGIONS_MAX];
    uint32_t n;
};

void regions_init(struct region_set *s);
/* Adds [base, base+len), merged with overlapping or touching regions. When
 * the set is full, the smallest region (possibly the new one) is dropped. */
void regions_add(struct region_set *s, uint64_t base, uint64_t len);
/* Removes [base, end) from every region (kernel image, low memory...). */
void regions_remove(struct region_set *s, uint64_t base, uint64_t end);
/* Total bytes of all regions, and the largest still unallocated run. */
uint64_t regions_total(const struct region_set *s);
uint64_t regions_largest_free(const struct region_set *s);
/* First fit: size bytes aligned to align (a power of two). */
bool regions_alloc(struct region_set *s, uint64_t size, uint64_t align, uint64_t *out);
void regions_mark(const struct region_set *s, struct region_mark *m);
void regions_release(struct region_set *s, const struct region_mark *m);
/* True when [base, base+len) lies inside one region. */
bool regions_contains(const struct region_set *s, uint64_t base, uint64_t len);

#endif
