/* Multiboot v1 information structure (the parts we read). */
#ifndef KERNEL_MULTIBOOT_H
#define KERNEL_MULTIBOOT_H

#include <stddef.h>
#include <stdint.h>

#define MULTIBOOT_BOOTLOADER_MAGIC 0x2badb002u

#define MBI_FLAG_MEM (1u << 0)
#define MBI_FLAG_CMDLINE (1u << 2)
#define MBI_FLAG_MMAP (1u << 6)
#define MBI_FLAG_LOADER_NAME (1u << 9)
#define MBI_FLAG_FRAMEBUFFER (1u << 12)

/* framebuffer_type */
#define MULTIBOOT_FRAMEBUFFER_INDEXED 0
#define MULTIBOOT_FRAMEBUFFER_RGB 1
#define MULTIBOOT_FRAMEBUFFER_EGA_TEXT 2

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
    uint32_t apm_table;
    uint32_t vbe_control_info, vbe_mode_info;
    uint16_t vbe_mode, vbe_interface_seg, vbe_interface_off, vbe_interface_len;
    /* valid with MBI_FLAG_FRAMEBUFFER */
    uint64_t framebuffer_addr; /* physical; may lie above 4 GiB */
    uint32_t framebuffer_pitch; /* bytes per line */
    uint32_t framebuffer_width, framebuffer_height; /* pixels (characters for EGA text) */
    uint8_t framebuffer_bpp;
    uint8_t framebuffer_type;
    /* The specification's table puts the colour fields at 110, but its own
     * multiboot.h (and so GRUB) keeps them in a union with a 32-bit palette
     * address, aligned to 112: GRUB on OVMF writes red at 112. */
    uint16_t color_info_alignment;
    /* RGB: each colour's lowest bit and width within a pixel */
    uint8_t red_position, red_size, green_position, green_size, blue_position, blue_size;
};

_Static_assert(offsetof(struct multiboot_info, framebuffer_addr) == 88, "multiboot v1 info layout");
_Static_assert(offsetof(struct multiboot_info, red_position) == 112, "multiboot v1 info layout (as GRUB writes it)");

struct __attribute__((packed)) multiboot_mmap_entry {
    uint32_t size; /* of the rest of the entry, not counting this field */
    uint64_t addr, len;
    uint32_t type;
};

#define MULTIBOOT_MEMORY_AVAILABLE 1
#define MULTIBOOT_MEMORY_ACPI_RECLAIMABLE 3
#define MULTIBOOT_MEMORY_NVS 4

#endif
