/* Physical memory from the multiboot map: what is usable, and large
 * aligned regions for benchmark buffers and page tables. The kernel image,
 * the first MiB, everything above 4 GiB and any range a non-available map
 * entry covers (even where an available one overlaps it) are never handed
 * out. The
 * multiboot data we need is copied into the kernel first (memory_init), so
 * nothing else needs protecting. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/acpi.h"
#include "kernel/multiboot.h"
#include "lib/cmdline.h"
#include "lib/regions.h"

/* A page: more than Linux's 2048 and GRUB's interactive editor's 1600.
 * GRUB's config file and QEMU's -append pass longer lines still; a longer
 * one is cut before its first token that does not fit, and rejected. */
#define CMDLINE_MAX 4096

struct boot_info {
    char cmdline[CMDLINE_MAX];  /* whole tokens only */
    struct cmdline_cut cut;     /* what a line longer than the buffer lost */
    char loader[64];
    bool valid_magic;
    const char *mem_source; /* "mmap", "mem_upper", "none" */
    const char *aslr;       /* hosted: "off", or why randomisation is on; NULL on bare metal */
};

void memory_init(uint32_t magic, const struct multiboot_info *mbi);
const struct boot_info *boot_info(void);
uint64_t memory_usable(void);         /* bytes of usable RAM (the whole map) */
/* Bytes the map listed as available that a reserved (or ACPI, bad...)
 * entry also covers: taken out of the free set, and out of usable. */
uint64_t memory_reserved_overlap(void);
uint64_t memory_largest_free(void);   /* largest block a benchmark may get */
uint32_t memory_top(void);            /* end of the highest usable byte below 4 GiB */
/* An aligned block of free memory, or NULL when it does not fit. */
void *memory_alloc(uint32_t size, uint32_t align);
void memory_mark(struct region_mark *m);
void memory_release(const struct region_mark *m);
const struct region_set *memory_regions(void);
/* The map's ACPI ranges (reclaimable or NVS) below 4 GiB, in map order,
 * for arch/acpi.c's search (acpi_use_map_ranges). */
uint32_t memory_acpi_ranges(const struct acpi_range **ranges);
/* A 4 KiB page below 1 MiB that the map calls RAM (never handed out by
 * memory_alloc), for the other CPUs' start-up code; 0 if there is none. */
uint32_t memory_low_page(void);
/* True when [p, p+len) lies in free memory (not kernel, not reserved). */
bool memory_is_free_ram(const void *p, uint32_t len);

#endif
