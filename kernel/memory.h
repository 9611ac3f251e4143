/* Physical memory from the multiboot map: what is usable, and large
 * aligned regions for benchmark buffers and page tables. The kernel image,
 * the first MiB, everything above 4 GiB and any range a non-available map
 * entry covers (even where an available one overlaps it) are never handed
 * out. The loader's data is copied into the kernel first (lib/bootinfo.h),
 * so nothing else needs protecting. Where the image itself sits is checked
 * against the maps: a loader that put it on memory the firmware did not
 * give (GRUB's multiboot v1 on UEFI does not look) is named, not hidden. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/acpi.h"
#include "lib/bootinfo.h"
#include "lib/cmdline.h"
#include "lib/regions.h"

/* lib/bootinfo.h says why this size */
#define CMDLINE_MAX BOOT_CMDLINE_MAX

struct boot_info {
    char cmdline[CMDLINE_MAX];  /* whole tokens only */
    struct cmdline_cut cut;     /* what a line longer than the buffer lost */
    char loader[64];
    uint32_t protocol;      /* multiboot 1 or 2; 0: no multiboot magic (or the hosted build) */
    const char *mem_source; /* "mmap", "mem_upper", "none" */
    const char *aslr;       /* hosted: "off", or why randomisation is on; NULL on bare metal */
    /* The user's code the host handed over (lib/usercode.h): the loader's
     * modules, kept out of the free set (hosted: files mapped read-only, named
     * by the environment, hosted/memory.c). */
    uint32_t nmodules;
    struct boot_blob {
        const void *addr;
        uint32_t len;
    } modules[BOOT_MODULES_MAX];
};

/* The free set from the loader's map (or mem_lower/mem_upper), less the
 * first MiB and the image, whose place is checked against the maps. */
void memory_init(const struct bootinfo *b);
const struct boot_info *boot_info(void);
uint64_t memory_usable(void);         /* bytes of usable RAM (the whole map) */
/* Bytes the map listed as available that a reserved (or ACPI, bad...)
 * entry also covers: taken out of the free set, and out of usable. */
uint64_t memory_reserved_overlap(void);
uint64_t memory_largest_free(void);   /* largest block a benchmark may get */
uint32_t memory_top(void);            /* end of the highest usable byte below 4 GiB */
/* An aligned block of free memory, or NULL when it does not fit. */
void *memory_alloc(uint32_t size, uint32_t align);
/* memory_alloc's, where the CPU may also run code (a process's pages are
 * not executable unless asked for): the user's code, unrolled. */
void *memory_alloc_code(uint32_t size);
void memory_mark(struct region_mark *m);
void memory_release(const struct region_mark *m);
const struct region_set *memory_regions(void);
/* The map's ACPI ranges (reclaimable or NVS) below 4 GiB, in map order,
 * for arch/acpi.c's search (acpi_use_map_ranges). */
uint32_t memory_acpi_ranges(const struct acpi_range **ranges);
/* [base, end) of the kernel image where it runs (multiboot2 may have
 * placed it elsewhere than its link address; boot/boot.asm fixed it up). */
void memory_image(uint32_t *base, uint32_t *end);
/* The first piece of the image that a map does not call free memory, or
 * NULL when it lies wholly in free memory. */
const struct boot_overlap *memory_image_overlap(void);
/* Map entries past BOOT_MAP_MAX (lib/bootinfo.h), never read. */
uint32_t memory_map_dropped(void);
/* The first range the map calls available above 4 GiB (never handed out:
 * the kernel does not map it), for the PSE-36 self-test; false if none. */
bool memory_high_ram(uint64_t *base, uint64_t *len);
/* A 4 KiB page below 1 MiB that the map calls RAM (never handed out by
 * memory_alloc), for the other CPUs' start-up code; 0 if there is none. */
uint32_t memory_low_page(void);
/* True when [p, p+len) lies in free memory (not kernel, not reserved). */
bool memory_is_free_ram(const void *p, uint32_t len);

#endif
