#include "kernel/memory.h"

#include "lib/string.h"

extern char _kernel_start[], _kernel_end[];

#define FOUR_GIB ((uint64_t)1 << 32)
#define ONE_MIB ((uint64_t)1 << 20)

static struct boot_info boot;
static struct region_set free_set;
static uint64_t usable;
static uint64_t reserved_overlap;
static uint32_t top;
static struct acpi_range acpi_ranges[ACPI_RANGES_MAX];
static uint32_t n_acpi_ranges;
static uint32_t image_base, image_end, map_dropped;
static uint64_t high_base, high_len; /* the first available range above 4 GiB */
static bool image_overlaps;
static struct boot_overlap image_overlap;
static uint32_t low_page;

/* A page below 1 MiB that the map calls RAM (the other CPUs' start-up code
 * must sit there: a SIPI names a real-mode page). The customary 0x8000 and
 * up first, clear of the BIOS data area and whatever a loader kept low. */
#define LOW_PAGE_FIRST 0x8000u
#define LOW_PAGE_FALLBACK 0x1000u
#define LOW_PAGE_END 0x9f000u

static uint32_t find_low_page(uint32_t from)
{
    for (uint32_t p = from; p < LOW_PAGE_END; p += 4096)
        if (regions_contains(&free_set, p, 4096))
            return p;
    return 0;
}

const struct boot_info *boot_info(void) { return &boot; }

static void add_usable(uint64_t base, uint64_t len)
{
    usable += len;
    if (base + len > FOUR_GIB && !high_len) {
        high_base = base > FOUR_GIB ? base : FOUR_GIB;
        high_len = base + len - high_base;
    }
    if (base >= FOUR_GIB)
        return;
    if (base + len > FOUR_GIB)
        len = FOUR_GIB - base;
    regions_add(&free_set, base, len);
    uint64_t end = base + len;
    if (end > 0xfffff000u)
        end = 0xfffff000u; /* keep the top page out so the end fits 32 bits */
    if (end > top)
        top = (uint32_t)end;
}

static void note_acpi_range(const struct boot_map_entry *e)
{
    bool acpi = e->type == BOOT_MEM_ACPI_RECLAIMABLE || e->type == BOOT_MEM_NVS;
    if (!acpi || !e->len || e->base >= FOUR_GIB || n_acpi_ranges == ACPI_RANGES_MAX)
        return;
    uint64_t end = e->base + e->len > FOUR_GIB ? FOUR_GIB - 1 : e->base + e->len;
    acpi_ranges[n_acpi_ranges++] = (struct acpi_range){ (uint32_t)e->base, (uint32_t)end, e->type };
}

static void read_map(const struct boot_map *map)
{
    boot.mem_source = "mmap";
    for (uint32_t i = 0; i < map->n; i++) {
        if (map->e[i].type == BOOT_MEM_AVAILABLE)
            add_usable(map->e[i].base, map->e[i].len);
        else
            note_acpi_range(&map->e[i]);
    }
    /* Maps may overlap (firmware lists a reserved or ACPI range inside
     * or across available RAM, before or after it): whatever is not
     * plain RAM wins, in whichever order the entries come. */
    uint64_t before = regions_total(&free_set);
    for (uint32_t i = 0; i < map->n; i++) {
        const struct boot_map_entry *e = &map->e[i];
        if (e->type != BOOT_MEM_AVAILABLE && e->len && e->base < FOUR_GIB)
            regions_remove(&free_set, e->base, e->base + e->len > FOUR_GIB ? FOUR_GIB : e->base + e->len);
        if (e->type != BOOT_MEM_AVAILABLE && e->base < high_base + high_len && e->base + e->len > high_base)
            high_len = 0; /* not plain RAM after all: left alone */
    }
    reserved_overlap = before - regions_total(&free_set);
    usable -= reserved_overlap;
}

void memory_init(const struct bootinfo *b)
{
    regions_init(&free_set);
    boot.protocol = b->protocol;
    boot.mem_source = "none";
    memcpy(boot.cmdline, b->cmdline, sizeof boot.cmdline);
    boot.cut = b->cut;
    str_copy(boot.loader, b->loader, sizeof boot.loader);
    if (b->map.given) {
        read_map(&b->map);
    } else if (b->has_mem) {
        boot.mem_source = "mem_upper";
        add_usable(0, (uint64_t)b->mem_lower << 10);
        add_usable(ONE_MIB, (uint64_t)b->mem_upper << 10);
    }
    /* Where the loader put the image: linker.ld says why any free range
     * will do through multiboot2, and why the map is checked either way. */
    image_base = (uint32_t)_kernel_start;
    image_end = (uint32_t)_kernel_end;
    image_overlaps = bootinfo_overlap(b, image_base, image_end, &image_overlap);
    map_dropped = b->map.dropped + b->efi_map.dropped;
    low_page = find_low_page(LOW_PAGE_FIRST);
    if (!low_page)
        low_page = find_low_page(LOW_PAGE_FALLBACK);
    regions_remove(&free_set, 0, ONE_MIB);
    regions_remove(&free_set, image_base, image_end);
    for (uint32_t i = 0; i < b->nmodules; i++) { /* read in place, never handed out */
        const struct boot_module *m = &b->modules[i];
        regions_remove(&free_set, m->start, m->end);
        boot.modules[boot.nmodules++] = (struct boot_blob){ (const void *)m->start, m->end - m->start };
    }
}

uint64_t memory_usable(void) { return usable; }
uint32_t memory_acpi_ranges(const struct acpi_range **ranges)
{
    *ranges = acpi_ranges;
    return n_acpi_ranges;
}
uint64_t memory_reserved_overlap(void) { return reserved_overlap; }
uint32_t memory_low_page(void) { return low_page; }
uint64_t memory_largest_free(void) { return regions_largest_free(&free_set); }
uint32_t memory_top(void) { return top; }
const struct region_set *memory_regions(void) { return &free_set; }

void *memory_alloc(uint32_t size, uint32_t align)
{
    uint64_t at;
    if (size == 0)
        size = 1;
    if (!regions_alloc(&free_set, size, align ? align : 16, &at))
        return 0;
    return (void *)(uint32_t)at;
}

void *memory_alloc_code(uint32_t size) { return memory_alloc(size, 64); } /* no NX bit here */

void memory_mark(struct region_mark *m) { regions_mark(&free_set, m); }
void memory_release(const struct region_mark *m) { regions_release(&free_set, m); }

void memory_image(uint32_t *base, uint32_t *end)
{
    *base = image_base;
    *end = image_end;
}

const struct boot_overlap *memory_image_overlap(void) { return image_overlaps ? &image_overlap : 0; }
uint32_t memory_map_dropped(void) { return map_dropped; }

bool memory_high_ram(uint64_t *base, uint64_t *len)
{
    *base = high_base, *len = high_len;
    return high_len != 0;
}

bool memory_is_free_ram(const void *p, uint32_t len)
{
    return regions_contains(&free_set, (uint32_t)p, len);
}
