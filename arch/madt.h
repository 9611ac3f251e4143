/* The CPUs the firmware lists in the ACPI MADT: one processor local APIC
 * (or local x2APIC) entry per logical CPU, with its APIC id and whether it
 * is enabled (a disabled entry names a CPU that is not there, such as
 * QEMU's slots above -smp's count, unless it is "online capable", which
 * only matters for hot-plug). The parse itself touches no hardware, so the
 * unit tests run it on constructed tables (tests/unit/test_madt.c). */
#ifndef ARCH_MADT_H
#define ARCH_MADT_H

#include <stdbool.h>
#include <stdint.h>

#define MADT_MAX_CPUS 256

struct madt_cpus {
    uint32_t n;                     /* enabled CPUs listed, in MADT order */
    uint32_t apic_id[MADT_MAX_CPUS];
    uint32_t disabled;              /* entries for CPUs that are not there */
    uint32_t dropped;               /* enabled ones past MADT_MAX_CPUS */
    uint64_t lapic_base;            /* the MADT's local APIC address (an override wins) */
    const char *why;                /* why the table was not read (0: it was) */
};

/* table: the whole MADT (header included), len bytes, already checksummed. */
void madt_parse(const volatile uint8_t *table, uint32_t len, struct madt_cpus *out);

#endif
