/* arch/acpi.c on tables built in this process's memory (a 32-bit program:
 * its addresses are what the kernel's physical ones are to acpi.c): the
 * RSDP the loader passed is taken first; a table above 4 GiB is named in
 * `why`, never skipped silently; an X_PM_TMR_BLK in memory space is the PM
 * timer's register. Every scenario passes an RSDP copy, so acpi.c never
 * scans the BIOS areas (which a process cannot read). */
#include "arch/acpi.c"
#include "unit.h"

#define FOUR_GIB_PLUS(x) (((uint64_t)1 << 32) + (x))

static uint8_t rsdp_copy_buf[36], xsdt[36 + 4 * 8], rsdt[36 + 4 * 4], fadt[244], hpet[56];

static void checksum(uint8_t *t, uint32_t len, uint32_t at)
{
    t[at] = 0;
    t[at] = (uint8_t)(0x100 - byte_sum(t, len));
}

static void header(uint8_t *t, const char *sig, uint32_t len)
{
    memset(t, 0, len);
    memcpy(t, sig, 4);
    memcpy(t + 4, &len, 4);
    t[8] = 2;
}

static void table(uint8_t *t, uint32_t len) { checksum(t, len, 9); }

static uint32_t addr_of(const void *p) { return (uint32_t)(uintptr_t)p; }

static void make_rsdp(uint32_t revision, uint32_t rsdt_at, uint64_t xsdt_at)
{
    memset(rsdp_copy_buf, 0, sizeof rsdp_copy_buf);
    memcpy(rsdp_copy_buf, "RSD PTR ", 8);
    rsdp_copy_buf[15] = (uint8_t)revision;
    memcpy(rsdp_copy_buf + 16, &rsdt_at, 4);
    uint32_t len = 36;
    memcpy(rsdp_copy_buf + 20, &len, 4);
    memcpy(rsdp_copy_buf + 24, &xsdt_at, 8);
    checksum(rsdp_copy_buf, 20, 8);
    checksum(rsdp_copy_buf, 36, 32);
}

static void make_xsdt(const uint64_t *entries, uint32_t n)
{
    header(xsdt, "XSDT", 36 + 8 * n);
    memcpy(xsdt + 36, entries, 8 * n);
    table(xsdt, 36 + 8 * n);
}

static void make_rsdt(const uint32_t *entries, uint32_t n)
{
    header(rsdt, "RSDT", 36 + 4 * n);
    memcpy(rsdt + 36, entries, 4 * n);
    table(rsdt, 36 + 4 * n);
}

/* space: 0 memory, 1 I/O; legacy: PM_TMR_BLK's port (0: none) */
static void make_fadt(uint8_t space, uint64_t x_addr, uint32_t legacy)
{
    header(fadt, "FACP", sizeof fadt);
    memcpy(fadt + FADT_PM_TMR_BLK, &legacy, 4);
    fadt[FADT_PM_TMR_LEN] = legacy ? 4 : 0;
    uint32_t flags = FADT_FLAG_TMR_VAL_EXT;
    memcpy(fadt + FADT_FLAGS, &flags, 4);
    fadt[FADT_X_PM_TMR_BLK] = space;
    fadt[FADT_X_PM_TMR_BLK + 1] = 32;
    memcpy(fadt + FADT_X_PM_TMR_BLK + 4, &x_addr, 8);
    table(fadt, sizeof fadt);
}

static void make_hpet(uint64_t base)
{
    header(hpet, "HPET", sizeof hpet);
    hpet[HPET_BASE_GAS] = GAS_SPACE_MEMORY;
    memcpy(hpet + HPET_BASE_GAS + 4, &base, 8);
    table(hpet, sizeof hpet);
}

/* acpi.c scans once: start each scenario afresh, with this copy. */
static const struct acpi_tables *scan(uint32_t copy_len)
{
    scanned = false;
    memset(&found, 0, sizeof found);
    rsdp = 0;
    high_tables = 0;
    first_high = 0;
    acpi_use_rsdp_copy(rsdp_copy_buf, copy_len);
    return acpi_tables();
}

int main(void)
{
    /* OVMF-like: the loader's ACPI 2.0 RSDP, an XSDT with the FADT (PM
     * timer in memory space), a table above 4 GiB, and the HPET table */
    make_fadt(GAS_SPACE_MEMORY, 0xfed80008u, 0x608);
    make_hpet(0xfed00000u);
    uint64_t entries[] = { addr_of(fadt), FOUR_GIB_PLUS(0x7000), addr_of(hpet) };
    make_xsdt(entries, 3);
    make_rsdp(2, 0, addr_of(xsdt));
    const struct acpi_tables *a = scan(36);
    CHECK_STR(a->rsdp_where, "multiboot2");
    CHECK(a->rsdp == 0 && a->revision == 2 && a->xsdt);
    CHECK(a->pm_timer_mem == 0xfed80008u && a->pm_timer_port == 0 && a->pm_timer_bits == 32);
    CHECK(a->hpet_base == 0xfed00000u && !a->hpet_why && !a->pm_timer_why);
    CHECK(a->high_tables == 1 && a->why && strstr(a->why, "1 table the XSDT lists lies above 4 GiB"));
    CHECK(a->why && strstr(a->why, "0x100007000"));

    /* the HPET table is the one above 4 GiB: its user is told so, not "no HPET table" */
    uint64_t high_hpet[] = { addr_of(fadt), FOUR_GIB_PLUS(0x7000), FOUR_GIB_PLUS(0x9000) };
    make_xsdt(high_hpet, 3);
    make_rsdp(2, 0, addr_of(xsdt));
    a = scan(36);
    CHECK(a->hpet_base == 0 && a->high_tables == 2);
    CHECK(a->hpet_why && strstr(a->hpet_why, "no HPET table below 4 GiB: 2 tables the XSDT lists lie above 4 GiB"));
    CHECK(a->why == a->hpet_why);

    /* X_PM_TMR_BLK in memory above 4 GiB: the legacy port, when there is one */
    make_fadt(GAS_SPACE_MEMORY, FOUR_GIB_PLUS(0x8008), 0x608);
    uint64_t plain[] = { addr_of(fadt), addr_of(hpet) };
    make_xsdt(plain, 2);
    make_rsdp(2, 0, addr_of(xsdt));
    a = scan(36);
    CHECK(a->pm_timer_port == 0x608 && a->pm_timer_mem == 0 && !a->pm_timer_why && !a->why && a->high_tables == 0);
    /* ...and without one, why */
    make_fadt(GAS_SPACE_MEMORY, FOUR_GIB_PLUS(0x8008), 0);
    a = scan(36);
    CHECK(a->pm_timer_port == 0 && a->pm_timer_mem == 0);
    CHECK(a->pm_timer_why && strstr(a->pm_timer_why, "X_PM_TMR_BLK lies in memory above 4 GiB"));
    /* an I/O X_PM_TMR_BLK is a port */
    make_fadt(GAS_SPACE_IO, 0xb008, 0x608);
    a = scan(36);
    CHECK(a->pm_timer_port == 0xb008 && a->pm_timer_mem == 0);

    /* the XSDT itself above 4 GiB: the RSDT's 32-bit list instead, and it named */
    uint32_t rsdt_entries[] = { addr_of(fadt) };
    make_rsdt(rsdt_entries, 1);
    make_rsdp(2, addr_of(rsdt), FOUR_GIB_PLUS(0x1000));
    a = scan(36);
    CHECK(!a->xsdt && a->pm_timer_port == 0xb008 && a->hpet_base == 0 && a->high_tables == 1);
    CHECK(a->hpet_why && strstr(a->hpet_why, "no HPET table below 4 GiB: 1 table the RSDP lists lies above"));

    /* an ACPI 1.0 RSDP (multiboot2's old tag: 20 bytes): the RSDT */
    uint32_t both[] = { addr_of(fadt), addr_of(hpet) };
    make_rsdt(both, 2);
    make_rsdp(0, addr_of(rsdt), 0);
    a = scan(20);
    CHECK_STR(a->rsdp_where, "multiboot2");
    CHECK(a->revision == 0 && !a->xsdt && a->pm_timer_port == 0xb008 && a->hpet_base == 0xfed00000u && !a->why);
    /* no tables at all reachable: why says what the RSDP named */
    make_rsdp(2, 0, FOUR_GIB_PLUS(0x1000));
    a = scan(36);
    CHECK(a->why && strstr(a->why, "the RSDP names no valid RSDT or XSDT below 4 GiB"));
    CHECK(a->hpet_why == a->why && a->pm_timer_why == a->why);

    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed != 0;
}
