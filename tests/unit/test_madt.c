/* arch/madt.c on constructed MADTs: enabled and disabled local APICs, an
 * x2APIC entry for a CPU also listed as an xAPIC, the address override, a
 * truncated entry, and more CPUs than the table holds. */
#include "arch/madt.c"
#include "unit.h"

static uint8_t table[8192];
static uint32_t len;

static void header(uint32_t lapic)
{
    memset(table, 0, sizeof table);
    memcpy(table, "APIC", 4);
    table[36] = (uint8_t)lapic;
    table[37] = (uint8_t)(lapic >> 8);
    table[38] = (uint8_t)(lapic >> 16);
    table[39] = (uint8_t)(lapic >> 24);
    len = 44;
}

static void put32(uint32_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        table[at + i] = (uint8_t)(v >> (8 * i));
}

static void lapic(uint8_t id, uint32_t flags)
{
    table[len] = 0;
    table[len + 1] = 8;
    table[len + 2] = id; /* ACPI processor UID */
    table[len + 3] = id;
    put32(len + 4, flags);
    len += 8;
}

static void x2apic(uint32_t id, uint32_t flags)
{
    table[len] = 9;
    table[len + 1] = 16;
    put32(len + 4, id);
    put32(len + 8, flags);
    put32(len + 12, id);
    len += 16;
}

int main(void)
{
    struct madt_cpus c;
    /* QEMU -smp 2 with maxcpus 4: two enabled, two disabled; an I/O APIC entry between */
    header(0xfee00000u);
    lapic(0, 1);
    lapic(1, 1);
    table[len] = 1; /* I/O APIC: skipped */
    table[len + 1] = 12;
    len += 12;
    lapic(2, 0);
    lapic(3, 0);
    madt_parse(table, len, &c);
    CHECK(c.why == 0 && c.n == 2 && c.apic_id[0] == 0 && c.apic_id[1] == 1 && c.disabled == 2);
    CHECK(c.lapic_base == 0xfee00000u);

    /* an x2APIC entry for a CPU already listed counts once; a new one is added */
    x2apic(1, 1);
    x2apic(300, 1);
    madt_parse(table, len, &c);
    CHECK(c.n == 3 && c.apic_id[2] == 300);

    /* the address override wins */
    table[len] = 5;
    table[len + 1] = 12;
    put32(len + 4, 0xfed00000u);
    put32(len + 8, 0);
    len += 12;
    madt_parse(table, len, &c);
    CHECK(c.lapic_base == 0xfed00000u);

    /* an entry running past the end: what came before is kept, and said */
    madt_parse(table, len - 5, &c);
    CHECK(c.n == 3 && c.why != 0);
    madt_parse(table, 20, &c);
    CHECK(c.n == 0 && c.why != 0);

    /* more enabled CPUs than the table holds: the rest counted as dropped */
    header(0xfee00000u);
    for (uint32_t i = 0; i < MADT_MAX_CPUS + 3; i++)
        x2apic(i, 1);
    madt_parse(table, len, &c);
    CHECK(c.n == MADT_MAX_CPUS && c.dropped == 3);
    return unit_finish();
}
