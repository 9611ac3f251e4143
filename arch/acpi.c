#include "arch/acpi.h"

#include "lib/fmt.h"
#include "lib/string.h"

#define BDA_EBDA_SEGMENT 0x40E  /* word: the EBDA's real-mode segment */
#define EBDA_SCAN_BYTES 1024    /* ACPI: the RSDP may be in the EBDA's first KiB */
#define BIOS_AREA_START 0xE0000u
#define BIOS_AREA_END 0x100000u
/* The map's ACPI ranges scanned for a UEFI firmware's RSDP, at most (OVMF's
 * are a few hundred KiB; the table data it points into is read anyway). */
#define ACPI_MAP_SCAN_BYTES (16u << 20)
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36
#define SDT_HEADER_LEN 36
/* Bounds for a table we trust: an RSDT/XSDT of 4096 entries, a FADT or an
 * HPET table far larger than any revision defines. Anything larger is a
 * corrupt header, not a table. */
#define MAX_ROOT_LEN (SDT_HEADER_LEN + 4096 * 8)
#define MAX_TABLE_LEN 4096

static const struct acpi_range *map_ranges;
static uint32_t n_map_ranges;
static const uint8_t *rsdp_copy;
static uint32_t rsdp_copy_len;

void acpi_use_map_ranges(const struct acpi_range *ranges, uint32_t n)
{
    map_ranges = ranges;
    n_map_ranges = n;
}

void acpi_use_rsdp_copy(const uint8_t *rsdp, uint32_t len)
{
    rsdp_copy = rsdp;
    rsdp_copy_len = len;
}
#define FADT_PM_TMR_BLK 76
#define FADT_PM_TMR_LEN 91
#define FADT_FLAGS 112
#define FADT_X_PM_TMR_BLK 208        /* a generic address structure (12 bytes) */
#define FADT_FLAG_TMR_VAL_EXT (1u << 8)   /* the PM timer is 32 bits wide, else 24 */
#define FADT_FLAG_HW_REDUCED (1u << 20)   /* no fixed hardware: no PM timer */
#define HPET_BASE_GAS 40
#define GAS_SPACE_MEMORY 0
#define GAS_SPACE_IO 1

#define FOUR_GIB ((uint64_t)1 << 32)

static struct acpi_tables found;
static bool scanned;
static const volatile uint8_t *rsdp; /* the RSDP found: in memory, or the loader's copy */

static uint8_t byte_sum(const volatile uint8_t *p, uint32_t n)
{
    uint8_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    return s;
}

static uint32_t read32(const volatile uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t read64(const volatile uint8_t *p) { return read32(p) | (uint64_t)read32(p + 4) << 32; }

/* A physical address is a pointer while paging is off. */
static const volatile uint8_t *phys(uint32_t addr) { return (const volatile uint8_t *)(uintptr_t)addr; }

/* len: the bytes there are (a loader's copy of a 1.0 RSDP has only 20) */
static bool rsdp_valid(const volatile uint8_t *p, uint32_t len)
{
    if (len < RSDP_V1_LEN || memcmp((const void *)p, "RSD PTR ", 8) != 0 || byte_sum(p, RSDP_V1_LEN) != 0)
        return false;
    /* ACPI 2.0+: the extended checksum covers the 36-byte structure */
    return p[15] < 2 || (len >= RSDP_V2_LEN && byte_sum(p, RSDP_V2_LEN) == 0);
}

static uint32_t scan_rsdp(uint32_t start, uint32_t end)
{
    for (uint32_t a = start; a + RSDP_V2_LEN <= end; a += 16)
        if (rsdp_valid(phys(a), RSDP_V2_LEN))
            return a;
    return 0;
}

static void scan_legacy(void)
{
    uint32_t ebda = (uint32_t)(*(const volatile uint16_t *)phys(BDA_EBDA_SEGMENT)) << 4;
    /* a BDA a UEFI firmware never filled in may hold anything: only a
     * segment in the conventional-memory top is an EBDA */
    if (ebda >= 0x80000 && ebda < 0xA0000) {
        found.rsdp = scan_rsdp(ebda, ebda + EBDA_SCAN_BYTES);
        if (found.rsdp)
            found.rsdp_where = "ebda";
    }
    if (!found.rsdp) {
        found.rsdp = scan_rsdp(BIOS_AREA_START, BIOS_AREA_END);
        if (found.rsdp)
            found.rsdp_where = "bios";
    }
    /* UEFI firmware keeps no legacy copy (OVMF does not); its RSDP lies in
     * memory the map calls ACPI (reclaimable or NVS): scan those, bounded. */
    uint32_t budget = ACPI_MAP_SCAN_BYTES;
    for (uint32_t i = 0; i < n_map_ranges && !found.rsdp && budget; i++) {
        uint32_t base = (map_ranges[i].base + 15) & ~15u, end = map_ranges[i].end;
        if (end <= base)
            continue;
        if (end - base > budget)
            end = base + budget;
        budget -= end - base;
        found.rsdp = scan_rsdp(base, end);
        if (found.rsdp)
            found.rsdp_where = map_ranges[i].type == ACPI_RANGE_NVS ? "acpi_nvs" : "acpi_reclaim";
    }
}

static void find_rsdp(void)
{
    /* ACPI 6.x 5.2.5.2: a UEFI system publishes the RSDP in the EFI
     * configuration table, which GRUB's multiboot2 copies for us (tags 14
     * and 15); the firmware may have put it anywhere, above 4 GiB too. */
    if (rsdp_copy && rsdp_valid(rsdp_copy, rsdp_copy_len)) {
        rsdp = rsdp_copy;
        found.rsdp_where = "multiboot2";
        return;
    }
    scan_legacy();
    if (found.rsdp)
        rsdp = phys(found.rsdp);
}

/* A table's header, if addr holds a checksummed table of at most max_len
 * bytes that does not run past 4 GiB; its length through *len. */
static const volatile uint8_t *table_at(uint64_t addr, uint32_t max_len, uint32_t *len)
{
    if (addr == 0 || addr >= FOUR_GIB - SDT_HEADER_LEN)
        return 0;
    const volatile uint8_t *t = phys((uint32_t)addr);
    uint32_t n = read32(t + 4);
    if (n < SDT_HEADER_LEN || n > max_len || addr + n > FOUR_GIB || byte_sum(t, n) != 0)
        return 0;
    *len = n;
    return t;
}

/* Tables a 32-bit kernel with paging off cannot read: named, not skipped
 * silently (EDK2 puts them above 4 GiB where a platform leaves ACPI 1.0b out). */
static uint32_t high_tables;
static uint64_t first_high;

static bool above_4g(uint64_t addr)
{
    if (addr < FOUR_GIB - SDT_HEADER_LEN)
        return false;
    if (!high_tables++)
        first_high = addr;
    return true;
}

static void read_fadt(const volatile uint8_t *f, uint32_t len)
{
    uint32_t flags = len >= FADT_FLAGS + 4 ? read32(f + FADT_FLAGS) : 0;
    if (flags & FADT_FLAG_HW_REDUCED) {
        found.pm_timer_why = "hardware-reduced ACPI: no PM timer";
        return;
    }
    found.pm_timer_why = "the FADT names no PM timer";
    uint64_t port = 0, mem = 0;
    /* ACPI 2.0+: the extended block, when it names one, wins: an I/O port,
     * or a register in memory space (read through the identity map) */
    if (len >= FADT_X_PM_TMR_BLK + 12) {
        uint64_t x = read64(f + FADT_X_PM_TMR_BLK + 4);
        if (f[FADT_X_PM_TMR_BLK] == GAS_SPACE_IO)
            port = x;
        else if (f[FADT_X_PM_TMR_BLK] == GAS_SPACE_MEMORY && x && x <= FOUR_GIB - 4)
            mem = x;
        else if (f[FADT_X_PM_TMR_BLK] == GAS_SPACE_MEMORY && x)
            found.pm_timer_why = "the FADT's X_PM_TMR_BLK lies in memory above 4 GiB, out of a 32-bit kernel's "
                                 "reach with paging off";
    }
    if (port == 0 && mem == 0 && len > FADT_PM_TMR_LEN && f[FADT_PM_TMR_LEN] == 4)
        port = read32(f + FADT_PM_TMR_BLK);
    if (mem) {
        found.pm_timer_mem = (uint32_t)mem;
    } else if (port && port <= 0xfffc) {
        found.pm_timer_port = (uint32_t)port;
    } else {
        return;
    }
    found.pm_timer_why = 0;
    found.pm_timer_bits = flags & FADT_FLAG_TMR_VAL_EXT ? 32 : 24;
}

static void read_hpet(const volatile uint8_t *h, uint32_t len)
{
    if (len < HPET_BASE_GAS + 12 || h[HPET_BASE_GAS] != GAS_SPACE_MEMORY)
        return;
    found.hpet_base = read64(h + HPET_BASE_GAS + 4);
}

static const volatile uint8_t *find_root(uint32_t *len, uint32_t *entry)
{
    found.revision = rsdp[15];
    if (found.revision >= 2) {
        uint64_t xsdt = read64(rsdp + 24);
        const volatile uint8_t *root = above_4g(xsdt) ? 0 : table_at(xsdt, MAX_ROOT_LEN, len);
        if (root && memcmp((const void *)root, "XSDT", 4) == 0) {
            found.xsdt = true;
            *entry = 8;
            return root;
        }
    }
    *entry = 4;
    const volatile uint8_t *root = table_at(read32(rsdp + 16), MAX_ROOT_LEN, len);
    return root && memcmp((const void *)root, "RSDT", 4) == 0 ? root : 0;
}

/* Tables above 4 GiB, said once; what a missing table's user says:
 * "no HPET table", or that it may be one of those. */
static char high_said[160];

static const char *missing(const char *table, char *buf, uint32_t size)
{
    if (!high_tables)
        return table;
    fmt(buf, size, "%s below 4 GiB: %s", table, high_said);
    return buf;
}

static void walk_root(void)
{
    static char no_root[200], no_fadt[200], no_hpet[200], no_madt[200];
    uint32_t len = 0, entry;
    const volatile uint8_t *root = find_root(&len, &entry);
    bool fadt = false;
    for (uint32_t off = SDT_HEADER_LEN; root && off + entry <= len; off += entry) {
        uint64_t addr = entry == 8 ? read64(root + off) : read32(root + off);
        uint32_t tlen;
        const volatile uint8_t *t = above_4g(addr) ? 0 : table_at(addr, MAX_TABLE_LEN, &tlen);
        if (!t)
            continue;
        if (memcmp((const void *)t, "FACP", 4) == 0 && !fadt) {
            fadt = true;
            read_fadt(t, tlen);
        } else if (memcmp((const void *)t, "HPET", 4) == 0 && !found.hpet_base) {
            read_hpet(t, tlen);
        } else if (memcmp((const void *)t, "APIC", 4) == 0 && !found.madt) {
            found.madt = (uint32_t)addr;
            found.madt_len = tlen;
        }
    }
    found.high_tables = high_tables;
    if (high_tables)
        fmt(high_said, sizeof high_said, "%u table%s the %s lists lie%s above 4 GiB (the first at 0x%llx), out of a "
                                         "32-bit kernel's reach with paging off",
            high_tables, high_tables == 1 ? "" : "s", found.xsdt ? "XSDT" : "RSDP", high_tables == 1 ? "s" : "",
            (unsigned long long)first_high);
    if (!root) {
        found.why = found.pm_timer_why = found.hpet_why = found.madt_why =
            missing("the RSDP names no valid RSDT or XSDT", no_root, sizeof no_root);
        return;
    }
    if (!fadt)
        found.pm_timer_why = missing("no FADT", no_fadt, sizeof no_fadt);
    if (!found.hpet_base)
        found.hpet_why = missing("no HPET table", no_hpet, sizeof no_hpet);
    if (!found.madt)
        found.madt_why = missing("the ACPI tables list no MADT", no_madt, sizeof no_madt);
    found.why = found.pm_timer_why ? found.pm_timer_why : found.hpet_why;
    if (!found.why && high_tables)
        found.why = high_said;
}

const struct acpi_tables *acpi_tables(void)
{
    if (scanned)
        return &found;
    scanned = true;
    find_rsdp();
    if (rsdp) {
        walk_root();
    } else {
        found.why = "no RSDP: none passed by the loader (multiboot v1 passes none), and none in the EBDA, "
                    "0xE0000-0xFFFFF or the map's ACPI ranges";
        found.pm_timer_why = found.hpet_why = "no ACPI tables found";
        found.madt_why = found.why;
    }
    return &found;
}
