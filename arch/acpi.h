/* The ACPI tables the kernel reads: the FADT (where the PM timer is) and
 * the HPET table (where the HPET is) for the TSC calibration, the MADT (which
 * CPUs there are: arch/madt.c) for cpus=N. GRUB's multiboot v1
 * does not pass the RSDP: it is found the legacy way, by scanning the BIOS
 * areas, else (UEFI) in the memory map's ACPI ranges. Every address is physical and read with paging off (the calibration
 * runs before paging_init); every table is checksummed and bounded. */
#ifndef ARCH_ACPI_H
#define ARCH_ACPI_H

#include <stdbool.h>
#include <stdint.h>

struct acpi_tables {
    uint32_t rsdp;          /* physical address of the RSDP, 0 if none found */
    const char *rsdp_where; /* "ebda", "bios" (0xE0000-0xFFFFF), "acpi_reclaim"/"acpi_nvs" (map ranges), or 0 */
    uint32_t revision;      /* the RSDP's revision: 0 = ACPI 1.0 (RSDT only), 2 = XSDT too */
    bool xsdt;              /* the tables were listed by the XSDT (else the RSDT) */
    uint32_t pm_timer_port; /* I/O port of the PM timer, 0 if none */
    uint32_t pm_timer_bits; /* 24 or 32 */
    uint64_t hpet_base;     /* physical address of the HPET's registers, 0 if none */
    uint32_t madt;          /* physical address of the MADT ("APIC": the CPUs), 0 if none */
    uint32_t madt_len;
    const char *why;        /* why no RSDP, or why a table is unusable; 0 when all is well */
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
/* Scans once (the first call), then returns what it found. */
const struct acpi_tables *acpi_tables(void);

#endif
