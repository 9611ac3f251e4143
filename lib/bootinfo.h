/* What the boot loader handed over, copied out of its multiboot v1 or
 * multiboot2 information into one form before anything can overwrite it:
 * the command line, the loader's name, the memory map (and on UEFI the
 * firmware's own map), the framebuffer, the ACPI RSDP (multiboot2 passes a
 * copy of it) and where the image was loaded. kernel/memory.c, kernel/fbcon.c
 * and arch/acpi.c (through app/kmain.c) read this copy, never the loader's
 * data. Portable: the parser reads a structure at a 32-bit address, and the
 * unit tests (tests/unit/test_bootinfo.c) hand it ones they built. */
#ifndef LIB_BOOTINFO_H
#define LIB_BOOTINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cmdline.h"

/* What the loader leaves in EAX. */
#define MULTIBOOT1_LOADER_MAGIC 0x2badb002u
#define MULTIBOOT2_LOADER_MAGIC 0x36d76289u

/* A page: more than Linux's 2048 and GRUB's interactive editor's 1600.
 * GRUB's config file and QEMU's -append pass longer lines still; a longer
 * one is cut before its first token that does not fit (lib/cmdline.h), and
 * rejected. */
#define BOOT_CMDLINE_MAX 4096
#define BOOT_LOADER_MAX 64
/* Entries kept of each map (GRUB merges its own map's neighbours; a PC's
 * UEFI map has a few hundred); past that they are counted, not kept. */
#define BOOT_MAP_MAX 512
#define BOOT_RSDP_MAX 36 /* an ACPI 2.0+ RSDP; 1.0's is the first 20 bytes */
/* Modules the loader placed beside the image (QEMU -initrd, GRUB's module and
 * module2): the user's code (lib/usercode.h), past these counted, not kept. */
#define BOOT_MODULES_MAX 4
#define BOOT_MODULE_NAME_MAX 64

/* The multiboot memory map's types (the same in v1 and 2). */
enum boot_mem_type {
    BOOT_MEM_AVAILABLE = 1,
    BOOT_MEM_RESERVED = 2,
    BOOT_MEM_ACPI_RECLAIMABLE = 3,
    BOOT_MEM_NVS = 4,
    BOOT_MEM_BAD = 5,
};

/* The framebuffer's types (the same in v1 and 2). */
enum boot_fb_type { BOOT_FB_INDEXED = 0, BOOT_FB_RGB = 1, BOOT_FB_EGA_TEXT = 2 };

struct boot_map_entry {
    uint64_t base, len;
    uint32_t type; /* enum boot_mem_type; in the EFI map the UEFI memory type */
};

struct boot_map {
    bool given;
    uint32_t n;
    uint32_t dropped; /* entries past BOOT_MAP_MAX */
    struct boot_map_entry e[BOOT_MAP_MAX];
};

struct boot_fb {
    bool given;
    uint64_t addr; /* physical; may lie above 4 GiB */
    uint32_t pitch, width, height; /* bytes per line; pixels (characters for EGA text) */
    uint8_t bpp, type;             /* enum boot_fb_type */
    /* RGB: each colour's lowest bit and width within a pixel */
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

/* A module: [start, end) physical, and the loader's string for it (its
 * file's name and arguments under QEMU, the arguments under GRUB). */
struct boot_module {
    uint32_t start, end;
    char name[BOOT_MODULE_NAME_MAX];
};

struct bootinfo {
    uint32_t protocol; /* 1 or 2: which multiboot brought the kernel; 0: neither magic */
    bool has_cmdline, has_loader;
    char cmdline[BOOT_CMDLINE_MAX]; /* whole tokens only */
    struct cmdline_cut cut;         /* what a line longer than that lost */
    char loader[BOOT_LOADER_MAX];
    struct boot_map map;     /* the multiboot memory map (what the kernel allocates from) */
    struct boot_map efi_map; /* multiboot2 on UEFI: the firmware's map, lengths in bytes */
    bool has_mem;            /* v1's mem_lower/mem_upper (or multiboot2's basic tag) */
    uint32_t mem_lower, mem_upper; /* KiB below 1 MiB, KiB above 1 MiB */
    struct boot_fb fb;
    uint32_t rsdp_len; /* bytes in rsdp: 20 (ACPI 1.0) or 36; 0 when none was passed */
    uint8_t rsdp[BOOT_RSDP_MAX];
    bool has_load_base;    /* multiboot2: the loader placed a relocatable image */
    uint32_t load_base;    /* ...at this physical address */
    uint32_t nmodules;     /* modules kept, in the loader's order */
    uint32_t modules_dropped; /* past BOOT_MODULES_MAX */
    struct boot_module modules[BOOT_MODULES_MAX];
};

/* Copies what the loader handed over at addr (magic: EAX at entry).
 * Anything malformed (a tag running past the end, an entry size too small)
 * stops the reading there; what came before is kept. */
void bootinfo_read(uint32_t magic, uint32_t addr, struct bootinfo *out);

/* UEFI memory types after ExitBootServices: free (loader and boot-services
 * code and data, conventional memory) or not. */
bool boot_efi_type_usable(uint32_t type);
/* A map type's name: "available", "reserved", "ACPI reclaimable", ... for
 * the multiboot map, "EfiRuntimeServicesData", ... for the EFI map. */
const char *boot_mem_type_name(uint32_t type, bool efi);

/* The first piece of [base, end) that a map does not call free memory. */
struct boot_overlap {
    uint64_t base, end;
    const char *map;  /* "multiboot" or "efi" */
    uint32_t type;    /* the type of an entry covering it; 0 when no entry covers it */
    const char *what; /* that type's name, or "not in the map" */
};

/* False when [base, end) lies wholly in memory the loader's maps call free
 * (the multiboot map's available entries, where no other entry overlaps
 * them; on UEFI also the firmware's own map); true, with the first piece
 * that does not, otherwise. A map the loader did not pass is not checked. */
bool bootinfo_overlap(const struct bootinfo *b, uint64_t base, uint64_t end, struct boot_overlap *out);

#endif
