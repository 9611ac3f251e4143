#include "arch/madt.h"

#define HEADER_LEN 44 /* the SDT header (36), the local APIC address, flags */
#define TYPE_LAPIC 0
#define TYPE_LAPIC_OVERRIDE 5
#define TYPE_X2APIC 9
#define FLAG_ENABLED 1u

static uint32_t read32(const volatile uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void add(struct madt_cpus *out, uint32_t apic_id, uint32_t flags)
{
    if (!(flags & FLAG_ENABLED)) {
        out->disabled++;
        return;
    }
    for (uint32_t i = 0; i < out->n; i++)
        if (out->apic_id[i] == apic_id)
            return; /* listed twice (an xAPIC and an x2APIC entry for one CPU) */
    if (out->n == MADT_MAX_CPUS)
        out->dropped++;
    else
        out->apic_id[out->n++] = apic_id;
}

void madt_parse(const volatile uint8_t *t, uint32_t len, struct madt_cpus *out)
{
    *out = (struct madt_cpus){ 0 };
    if (len < HEADER_LEN) {
        out->why = "the MADT is shorter than its header";
        return;
    }
    out->lapic_base = read32(t + 36);
    for (uint32_t off = HEADER_LEN; off + 2 <= len;) {
        uint32_t type = t[off], elen = t[off + 1];
        if (elen < 2 || off + elen > len) {
            out->why = "an MADT entry runs past the table (the rest is ignored)";
            return;
        }
        const volatile uint8_t *e = t + off;
        if (type == TYPE_LAPIC && elen >= 8)
            add(out, e[3], read32(e + 4));
        else if (type == TYPE_X2APIC && elen >= 16)
            add(out, read32(e + 4), read32(e + 8));
        else if (type == TYPE_LAPIC_OVERRIDE && elen >= 12)
            out->lapic_base = read32(e + 4) | (uint64_t)read32(e + 8) << 32;
        off += elen;
    }
}
