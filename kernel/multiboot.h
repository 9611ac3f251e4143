/* Multiboot v1 information structure (the parts we read). */
#ifndef KERNEL_MULTIBOOT_H
#define KERNEL_MULTIBOOT_H

#include <stdint.h>

#define MULTIBOOT_BOOTLOADER_MAGIC 0x2badb002u

#define MBI_FLAG_MEM (1u << 0)
#define MBI_FLAG_CMDLINE (1u << 2)
#define MBI_FLAG_MMAP (1u << 6)
#define MBI_FLAG_LOADER_NAME (1u << 9)

struct __attribute__((packed)) multiboot_info {
    uint32_t flags;
    uint32_t mem_lower, mem_upper; /* KiB below 1 MiB, KiB above 1 MiB */
    uint32_t boot_device;
    uint32_t cmdline;
    uint32_t mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
    uint32_t drives_length, drives_addr;
    uint32_t config_table;
    uint32_t boot_loader_name;
};

struct __attribute__((packed)) multiboot_mmap_entry {
    uint32_t size; /* of the rest of the entry, not counting this field */
    uint64_t addr, len;
    uint32_t type;
};

#define MULTIBOOT_MEMORY_AVAILABLE 1
#define MULTIBOOT_MEMORY_ACPI_RECLAIMABLE 3
#define MULTIBOOT_MEMORY_NVS 4

#endif
