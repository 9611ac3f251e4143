/* The ACPI tables the kernel reads: the FADT (where the PM timer is) and
 * the HPET table (where the HPET is) for the TSC calibration, the MADT (which
 * CPUs there are: arch/madt.c) for cpus=N. The RSDP comes from the loader
 * where it passes one (GRUB's multiboot2: a copy of what the UEFI
 * configuration table or the BIOS area holds); multiboot v1 passes none, so
 * then it is found the legacy way, by scanning the BIOS areas, else (UEFI)
 * in the memory map's ACPI ranges. Every address is physical and read with
 * paging off (the calibration runs before paging_init); every table is
 * checksummed and bounded, and one above 4 GiB is named, not read. */
#ifndef ARCH_ACPI_H
#define ARCH_ACPI_H

#include <stdbool.h>
#include <stdint.h>

struct acpi_tables {
    uint32_t rsdp;          /* physical address of the RSDP found by a scan; 0 when none was, or the loader passed it */
    const char *rsdp_where; /* "multiboot2" (the loader's copy), "ebda", "bios" (0xE0000-0xFFFFF),
                               "acpi_reclaim"/"acpi_nvs" (map ranges), or 0 when there is none */
    uint32_t revision;      /* the RSDP's revision: 0 = ACPI 1.0 (RSDT only), 2 = XSDT too */
    bool xsdt;              /* the tables were listed by the XSDT (else the RSDT) */
    uint32_t pm_timer_port; /* I/O port of the PM timer, 0 if none */
    uint32_t pm_timer_mem;  /* or its register's physical address (X_PM_TMR_BLK in memory space), 0 if none */
    uint32_t pm_timer_bits; /* 24 or 32 */
    uint64_t hpet_base;     /* physical address of the HPET's registers, 0 if none */
    uint32_t madt;          /* physical address of the MADT ("APIC": the CPUs), 0 if none */
    uint32_t madt_len;
    uint32_t high_tables;   /* tables the RSDP/XSDT/RSDT list above 4 GiB, out of reach */
    const char *why;        /* why no RSDP, or why a table is unusable; 0 when all is well */
    const char *pm_timer_why; /* why no PM timer (0 when there is one) */
    const char *hpet_why;     /* why no HPET table (0 when there is one) */
    const char *madt_why;     /* why no MADT (0 when there is one) */
};

/* The loader's memory map's ACPI ranges (reclaimable or NVS), where a UEFI
 * firmware keeps the RSDP: multiboot v1 does not pass it, and UEFI keeps no
 * legacy copy, so these are searched when the BIOS areas hold none. */
#define ACPI_RANGES_MAX 16
enum acpi_range_type { ACPI_RANGE_RECLAIM = 3, ACPI_RANGE_NVS = 4 }; /* the map's type numbers */
struct acpi_range {
    uint32_t base, end;
    uint32_t type; /* enum acpi_range_type */
};
/* Before the first acpi_tables(): where else to look. The array must stay. */
void acpi_use_map_ranges(const struct acpi_range *ranges, uint32_t n);
/* Before the first acpi_tables(): the loader's copy of the RSDP (len 20 or
 * 36 bytes; 0: none), tried first. The copy must stay. */
void acpi_use_rsdp_copy(const uint8_t *rsdp, uint32_t len);
/* Scans once (the first call), then returns what it found. */
const struct acpi_tables *acpi_tables(void);

#endif
