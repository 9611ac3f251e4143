#include "lib/bootinfo.h"

#include "lib/regions.h"
#include "lib/string.h"

/* Multiboot v1: the information structure's offsets we read. */
#define MB1_FLAGS 0
#define MB1_MEM_LOWER 4
#define MB1_MEM_UPPER 8
#define MB1_CMDLINE 16
#define MB1_MMAP_LENGTH 44
#define MB1_MMAP_ADDR 48
#define MB1_LOADER_NAME 64
#define MB1_FB_ADDR 88
#define MB1_FB_PITCH 96
#define MB1_FB_WIDTH 100
#define MB1_FB_HEIGHT 104
#define MB1_FB_BPP 108
#define MB1_FB_TYPE 109
/* The specification's table puts the colour fields at 110, but its own
 * multiboot.h (and so GRUB) keeps them in a union with a 32-bit palette
 * address, aligned to 112: GRUB on OVMF writes red at 112. */
#define MB1_FB_COLORS 112
#define MB1_MODS_COUNT 20
#define MB1_MODS_ADDR 24
#define MB1_MOD_ENTRY 16 /* mod_start, mod_end, string, reserved */
#define MB1_FLAG_MODS (1u << 3)
#define MB1_FLAG_MEM (1u << 0)
#define MB1_FLAG_CMDLINE (1u << 2)
#define MB1_FLAG_MMAP (1u << 6)
#define MB1_FLAG_LOADER_NAME (1u << 9)
#define MB1_FLAG_FRAMEBUFFER (1u << 12)

/* Multiboot2: tags after an 8-byte header (total size, reserved), each
 * {type, size} and 8-byte aligned, up to an end tag (type 0). */
#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MODULE 3
#define MB2_TAG_BASIC_MEMINFO 4
#define MB2_TAG_MMAP 6
#define MB2_TAG_FRAMEBUFFER 8
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_TAG_EFI_MMAP 17
#define MB2_TAG_LOAD_BASE 21
#define MB2_TAG_HEADER 8
#define MB2_MMAP_ENTRY_MIN 24   /* base, length, type, reserved */
#define MB2_FB_COMMON 32        /* the colour information follows */
#define EFI_DESCRIPTOR_MIN 40   /* type, pad, physical, virtual, pages, attribute */
#define EFI_PAGE_SHIFT 12
#define RSDP_V1_LEN 20

static const uint8_t *at(uint32_t addr) { return (const uint8_t *)(uintptr_t)addr; }

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* A string of at most max bytes (multiboot2 tags bound theirs). */
static void copy_string(char *dst, uint32_t size, const uint8_t *src, uint32_t max)
{
    uint32_t n = 0;
    while (n + 1 < size && n < max && src[n])
        n++;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static bool terminated(const uint8_t *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!s[i])
            return true;
    return false;
}

static void add_entry(struct boot_map *m, uint64_t base, uint64_t len, uint32_t type)
{
    m->given = true;
    if (m->n == BOOT_MAP_MAX) {
        m->dropped++;
        return;
    }
    m->e[m->n++] = (struct boot_map_entry){ base, len, type };
}

static void read_fb(struct boot_fb *fb, const uint8_t *addr, const uint8_t *colors, bool has_colors)
{
    fb->given = true;
    fb->addr = rd64(addr);
    fb->pitch = rd32(addr + 8);
    fb->width = rd32(addr + 12);
    fb->height = rd32(addr + 16);
    fb->bpp = addr[20];
    fb->type = addr[21];
    if (fb->type == BOOT_FB_RGB && has_colors) {
        fb->red_pos = colors[0], fb->red_size = colors[1];
        fb->green_pos = colors[2], fb->green_size = colors[3];
        fb->blue_pos = colors[4], fb->blue_size = colors[5];
    }
}

static void add_module(struct bootinfo *b, uint32_t start, uint32_t end, const uint8_t *name, uint32_t max)
{
    if (end < start)
        return;
    if (b->nmodules >= BOOT_MODULES_MAX) {
        b->modules_dropped++;
        return;
    }
    struct boot_module *m = &b->modules[b->nmodules++];
    m->start = start, m->end = end;
    copy_string(m->name, sizeof m->name, name, max);
}

static void read_v1(uint32_t addr, struct bootinfo *b)
{
    const uint8_t *mbi = at(addr);
    uint32_t flags = rd32(mbi + MB1_FLAGS);
    if (flags & MB1_FLAG_CMDLINE) {
        b->has_cmdline = true;
        cmdline_copy(b->cmdline, sizeof b->cmdline, (const char *)at(rd32(mbi + MB1_CMDLINE)), &b->cut);
    }
    if (flags & MB1_FLAG_LOADER_NAME) {
        b->has_loader = true;
        str_copy(b->loader, (const char *)at(rd32(mbi + MB1_LOADER_NAME)), sizeof b->loader);
    }
    if (flags & MB1_FLAG_MEM) {
        b->has_mem = true;
        b->mem_lower = rd32(mbi + MB1_MEM_LOWER);
        b->mem_upper = rd32(mbi + MB1_MEM_UPPER);
    }
    if (flags & MB1_FLAG_MMAP) {
        b->map.given = true;
        uint32_t p = rd32(mbi + MB1_MMAP_ADDR), end = p + rd32(mbi + MB1_MMAP_LENGTH);
        /* each entry: size (of the rest), base, length, type */
        while (p + 24 <= end) {
            const uint8_t *e = at(p);
            uint32_t size = rd32(e);
            if (size < 20)
                break;
            add_entry(&b->map, rd64(e + 4), rd64(e + 12), rd32(e + 20));
            p += size + 4;
        }
    }
    if (flags & MB1_FLAG_FRAMEBUFFER)
        read_fb(&b->fb, mbi + MB1_FB_ADDR, mbi + MB1_FB_COLORS, true);
    if (flags & MB1_FLAG_MODS) {
        uint32_t n = rd32(mbi + MB1_MODS_COUNT), p = rd32(mbi + MB1_MODS_ADDR);
        for (uint32_t i = 0; i < n; i++, p += MB1_MOD_ENTRY) {
            const uint8_t *e = at(p);
            uint32_t str = rd32(e + 8);
            add_module(b, rd32(e), rd32(e + 4), str ? at(str) : (const uint8_t *)"", BOOT_MODULE_NAME_MAX);
        }
    }
}

static void read_mmap(struct boot_map *m, const uint8_t *tag, uint32_t size)
{
    m->given = true;
    uint32_t entry = rd32(tag + 8);
    if (entry < MB2_MMAP_ENTRY_MIN)
        return;
    for (uint32_t off = 16; off + entry <= size; off += entry)
        add_entry(m, rd64(tag + off), rd64(tag + off + 8), rd32(tag + off + 16));
}

static void read_efi_mmap(struct boot_map *m, const uint8_t *tag, uint32_t size)
{
    m->given = true;
    uint32_t entry = rd32(tag + 8);
    if (entry < EFI_DESCRIPTOR_MIN)
        return;
    for (uint32_t off = 16; off + entry <= size; off += entry) {
        const uint8_t *d = tag + off;
        add_entry(m, rd64(d + 8), rd64(d + 24) << EFI_PAGE_SHIFT, rd32(d));
    }
}

static void read_rsdp(struct bootinfo *b, const uint8_t *tag, uint32_t size, uint32_t want)
{
    uint32_t n = size - MB2_TAG_HEADER;
    if (n < want)
        return;
    memcpy(b->rsdp, tag + MB2_TAG_HEADER, want);
    b->rsdp_len = want;
}

static void read_tag(struct bootinfo *b, uint32_t type, const uint8_t *tag, uint32_t size)
{
    const uint8_t *body = tag + MB2_TAG_HEADER;
    uint32_t body_size = size - MB2_TAG_HEADER;
    switch (type) {
    case MB2_TAG_CMDLINE: /* zero-terminated in the tag, or it is malformed */
        if (terminated(body, body_size)) {
            b->has_cmdline = true;
            cmdline_copy(b->cmdline, sizeof b->cmdline, (const char *)body, &b->cut);
        }
        break;
    case MB2_TAG_LOADER_NAME:
        b->has_loader = true;
        copy_string(b->loader, sizeof b->loader, body, body_size);
        break;
    case MB2_TAG_MODULE:
        if (body_size >= 8)
            add_module(b, rd32(body), rd32(body + 4), body + 8, body_size - 8);
        break;
    case MB2_TAG_BASIC_MEMINFO:
        if (body_size >= 8) {
            b->has_mem = true;
            b->mem_lower = rd32(body);
            b->mem_upper = rd32(body + 4);
        }
        break;
    case MB2_TAG_MMAP:
        if (body_size >= 8)
            read_mmap(&b->map, tag, size);
        break;
    case MB2_TAG_EFI_MMAP:
        if (body_size >= 8)
            read_efi_mmap(&b->efi_map, tag, size);
        break;
    case MB2_TAG_FRAMEBUFFER:
        if (size >= MB2_FB_COMMON)
            read_fb(&b->fb, body, tag + MB2_FB_COMMON, size >= MB2_FB_COMMON + 6);
        break;
    case MB2_TAG_ACPI_OLD:
        if (b->rsdp_len < BOOT_RSDP_MAX) /* the new tag's copy wins, whichever comes first */
            read_rsdp(b, tag, size, RSDP_V1_LEN);
        break;
    case MB2_TAG_ACPI_NEW:
        read_rsdp(b, tag, size, BOOT_RSDP_MAX);
        break;
    case MB2_TAG_LOAD_BASE:
        if (body_size >= 4) {
            b->has_load_base = true;
            b->load_base = rd32(body);
        }
        break;
    default:
        break;
    }
}

static void read_v2(uint32_t addr, struct bootinfo *b)
{
    const uint8_t *mbi = at(addr);
    uint32_t total = rd32(mbi);
    for (uint32_t off = MB2_TAG_HEADER; off + MB2_TAG_HEADER <= total;) {
        uint32_t type = rd32(mbi + off), size = rd32(mbi + off + 4);
        if (type == MB2_TAG_END || size < MB2_TAG_HEADER || size > total - off)
            break;
        read_tag(b, type, mbi + off, size);
        off += (size + 7) & ~7u;
    }
}

void bootinfo_read(uint32_t magic, uint32_t addr, struct bootinfo *out)
{
    memset(out, 0, sizeof *out);
    if (!addr)
        return;
    if (magic == MULTIBOOT1_LOADER_MAGIC) {
        out->protocol = 1;
        read_v1(addr, out);
    } else if (magic == MULTIBOOT2_LOADER_MAGIC) {
        out->protocol = 2;
        read_v2(addr, out);
    }
}

/* UEFI 2.x, EFI_MEMORY_TYPE */
static const char *const efi_type_names[] = {
    "EfiReservedMemoryType", "EfiLoaderCode", "EfiLoaderData", "EfiBootServicesCode",
    "EfiBootServicesData", "EfiRuntimeServicesCode", "EfiRuntimeServicesData", "EfiConventionalMemory",
    "EfiUnusableMemory", "EfiACPIReclaimMemory", "EfiACPIMemoryNVS", "EfiMemoryMappedIO",
    "EfiMemoryMappedIOPortSpace", "EfiPalCode", "EfiPersistentMemory", "EfiUnacceptedMemoryType",
};
#define EFI_LOADER_CODE 1
#define EFI_LOADER_DATA 2
#define EFI_BOOT_SERVICES_CODE 3
#define EFI_BOOT_SERVICES_DATA 4
#define EFI_CONVENTIONAL_MEMORY 7

static const char *const mb_type_names[] = {
    "type 0", "available", "reserved", "ACPI reclaimable", "ACPI NVS", "bad memory",
};

bool boot_efi_type_usable(uint32_t type)
{
    return type == EFI_LOADER_CODE || type == EFI_LOADER_DATA || type == EFI_BOOT_SERVICES_CODE ||
           type == EFI_BOOT_SERVICES_DATA || type == EFI_CONVENTIONAL_MEMORY;
}

const char *boot_mem_type_name(uint32_t type, bool efi)
{
    if (efi)
        return type < sizeof efi_type_names / sizeof efi_type_names[0] ? efi_type_names[type] : "an OEM type";
    return type < sizeof mb_type_names / sizeof mb_type_names[0] ? mb_type_names[type] : "an unknown type";
}

static bool entry_free(const struct boot_map_entry *e, bool efi)
{
    return efi ? boot_efi_type_usable(e->type) : e->type == BOOT_MEM_AVAILABLE;
}

static uint64_t entry_end(const struct boot_map_entry *e)
{
    return e->base + e->len < e->base ? UINT64_MAX : e->base + e->len;
}

/* As kernel/memory.c reads a map: free where a free entry says so and no
 * other entry claims the range, whichever comes first. */
static bool map_overlap(const struct boot_map *m, bool efi, uint64_t base, uint64_t end, struct boot_overlap *out)
{
    struct region_set left;
    regions_init(&left);
    regions_add(&left, base, end - base);
    for (uint32_t i = 0; i < m->n; i++)
        if (entry_free(&m->e[i], efi))
            regions_remove(&left, m->e[i].base, entry_end(&m->e[i]));
    for (uint32_t i = 0; i < m->n; i++) {
        uint64_t lo = m->e[i].base > base ? m->e[i].base : base;
        uint64_t hi = entry_end(&m->e[i]) < end ? entry_end(&m->e[i]) : end;
        if (!entry_free(&m->e[i], efi) && lo < hi)
            regions_add(&left, lo, hi - lo);
    }
    if (left.n == 0)
        return false;
    *out = (struct boot_overlap){ left.r[0].base, left.r[0].end, efi ? "efi" : "multiboot", 0, "not in the map" };
    for (uint32_t i = 0; i < m->n; i++)
        if (!entry_free(&m->e[i], efi) && m->e[i].base < out->end && entry_end(&m->e[i]) > out->base) {
            out->type = m->e[i].type;
            out->what = boot_mem_type_name(m->e[i].type, efi);
            break;
        }
    return true;
}

bool bootinfo_overlap(const struct bootinfo *b, uint64_t base, uint64_t end, struct boot_overlap *out)
{
    if (end <= base)
        return false;
    if (b->map.given && map_overlap(&b->map, false, base, end, out))
        return true;
    return b->efi_map.given && map_overlap(&b->efi_map, true, base, end, out);
}
