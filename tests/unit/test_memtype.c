/* arch/memtype.c on constructed MTRR sets: the SeaBIOS/OVMF layout, a UC
 * hole inside a buffer, overlaps, fixed ranges, MTRRs disabled or absent,
 * the PAT combination, and which 4 MiB pages must be split. */
#include "arch/memtype.c"
#include "unit.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define WIDTH (((1ull << 36) - 1) & ~0xfffull) /* 36 physical address bits */

static struct mtrr_set seabios(void)
{
    struct mtrr_set s = { .present = true, .enabled = true, .fixed_enabled = true, .def_type = MEMTYPE_WB };
    for (int i = 0; i < MTRR_FIXED_COUNT; i++)
        s.fixed[i] = MEMTYPE_WB;
    for (int i = 8; i < 24; i++) /* 0xA0000-0xBFFFF: VGA memory */
        if (i >= 16)
            s.fixed[i] = MEMTYPE_UC;
    s.nvar = 8;
    s.var[0] = (struct mtrr_var){ 2 * GIB, WIDTH & ~(2 * GIB - 1), MEMTYPE_UC, true }; /* [2 GiB, 4 GiB) */
    return s;
}

static void add_var(struct mtrr_set *s, int i, uint64_t base, uint64_t size, uint8_t type)
{
    s->var[i] = (struct mtrr_var){ base, WIDTH & ~(size - 1), type, true };
}

int main(void)
{
    struct mtrr_set s = seabios();
    uint64_t other = 0;

    /* names as the records print them */
    CHECK_STR(memtype_name(MEMTYPE_WB), "wb");
    CHECK_STR(memtype_name(MEMTYPE_UC), "uc");
    CHECK_STR(memtype_name(MEMTYPE_WC), "wc");
    CHECK_STR(memtype_name(MEMTYPE_WT), "wt");
    CHECK_STR(memtype_name(MEMTYPE_WP), "wp");
    CHECK_STR(memtype_name(MEMTYPE_MIXED), "mixed");
    CHECK_STR(memtype_name(MEMTYPE_UNKNOWN), "unknown");
    CHECK_STR(memtype_name((enum memtype)2), "reserved");

    /* RAM below the PCI hole is write-back, the hole is not */
    CHECK(memtype_range(&s, MIB, 128 * MIB, 0) == MEMTYPE_WB);
    CHECK(memtype_range(&s, 2 * GIB, 4 * GIB, 0) == MEMTYPE_UC);
    CHECK(memtype_range(&s, 2 * GIB - 4 * KIB, 2 * GIB + 4 * KIB, &other) == MEMTYPE_MIXED && other == 2 * GIB);
    CHECK(memtype_at(&s, 2 * GIB - 1) == MEMTYPE_WB && memtype_at(&s, 2 * GIB) == MEMTYPE_UC);
    /* fixed ranges: VGA memory is UC, BIOS area WB */
    CHECK(memtype_at(&s, 0xA0000) == MEMTYPE_UC && memtype_at(&s, 0xBFFFF) == MEMTYPE_UC);
    CHECK(memtype_at(&s, 0x9FFFF) == MEMTYPE_WB && memtype_at(&s, 0xC0000) == MEMTYPE_WB);
    CHECK(memtype_range(&s, 0, MIB, &other) == MEMTYPE_MIXED && other == 0xA0000);
    CHECK(memtype_range(&s, 0xC0000, 4 * MIB, 0) == MEMTYPE_WB);
    /* fixed ranges off: the variable ones (and the default) rule below 1 MiB too */
    s.fixed_enabled = false;
    CHECK(memtype_at(&s, 0xA0000) == MEMTYPE_WB);
    s.fixed_enabled = true;

    /* a UC hole of 64 KiB inside a benchmark buffer */
    add_var(&s, 1, 40 * MIB, 64 * KIB, MEMTYPE_UC);
    CHECK(memtype_range(&s, 32 * MIB, 48 * MIB, &other) == MEMTYPE_MIXED && other == 40 * MIB);
    CHECK(memtype_range(&s, 40 * MIB, 40 * MIB + 64 * KIB, 0) == MEMTYPE_UC);
    CHECK(memtype_range(&s, 40 * MIB + 64 * KIB, 48 * MIB, 0) == MEMTYPE_WB);
    /* a write-combining frame buffer */
    add_var(&s, 2, 64 * MIB, 8 * MIB, MEMTYPE_WC);
    CHECK(memtype_range(&s, 64 * MIB, 72 * MIB, 0) == MEMTYPE_WC);
    /* overlaps: UC wins, WT beats WB, WC over WB is undefined: answered UC */
    add_var(&s, 3, 96 * MIB, 4 * MIB, MEMTYPE_WT);
    add_var(&s, 4, 96 * MIB, 8 * MIB, MEMTYPE_WB);
    CHECK(memtype_at(&s, 97 * MIB) == MEMTYPE_WT && memtype_at(&s, 101 * MIB) == MEMTYPE_WB);
    add_var(&s, 5, 96 * MIB, 1 * MIB, MEMTYPE_UC);
    CHECK(memtype_at(&s, 96 * MIB) == MEMTYPE_UC && memtype_at(&s, 97 * MIB) == MEMTYPE_WT);
    add_var(&s, 6, 112 * MIB, 4 * MIB, MEMTYPE_WC);
    add_var(&s, 7, 112 * MIB, 4 * MIB, MEMTYPE_WB);
    CHECK(memtype_at(&s, 113 * MIB) == MEMTYPE_UC);
    /* an invalid range (valid bit clear) counts for nothing */
    s.var[7].valid = false;
    CHECK(memtype_at(&s, 113 * MIB) == MEMTYPE_WC);

    /* a non-contiguous mask: every other 4 MiB of [0, 32 MiB) by bit 22 */
    struct mtrr_set odd = seabios();
    odd.var[1] = (struct mtrr_var){ 4 * MIB, (WIDTH & ~(32 * MIB - 1)) | 4 * MIB, MEMTYPE_UC, true };
    CHECK(memtype_at(&odd, 4 * MIB) == MEMTYPE_UC && memtype_at(&odd, 8 * MIB) == MEMTYPE_WB);
    CHECK(memtype_at(&odd, 12 * MIB) == MEMTYPE_UC && memtype_at(&odd, 36 * MIB) == MEMTYPE_WB);
    CHECK(memtype_range(&odd, 8 * MIB, 12 * MIB, 0) == MEMTYPE_WB);
    CHECK(memtype_range(&odd, 8 * MIB, 16 * MIB, &other) == MEMTYPE_MIXED && other == 12 * MIB);

    /* MTRRs present but disabled: every byte is UC. Absent: nothing is known */
    struct mtrr_set off = seabios();
    off.enabled = false;
    CHECK(memtype_range(&off, MIB, 128 * MIB, 0) == MEMTYPE_UC);
    struct mtrr_set none = { .present = false };
    CHECK(memtype_range(&none, MIB, 128 * MIB, 0) == MEMTYPE_UNKNOWN);
    CHECK(memtype_at(&none, 0) == MEMTYPE_UNKNOWN);

    /* PAT entry 0 over the MTRR type (SDM table of effective page-level types) */
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_WB) == MEMTYPE_WB);
    CHECK(memtype_with_pat(MEMTYPE_UC, MEMTYPE_WB) == MEMTYPE_UC);
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_UC_MINUS) == MEMTYPE_UC);
    CHECK(memtype_with_pat(MEMTYPE_WC, MEMTYPE_UC_MINUS) == MEMTYPE_WC);
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_WT) == MEMTYPE_WT);
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_WC) == MEMTYPE_WC);
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_WP) == MEMTYPE_WP);
    CHECK(memtype_with_pat(MEMTYPE_WB, MEMTYPE_UC) == MEMTYPE_UC);
    CHECK(memtype_with_pat(MEMTYPE_WB, 2) == MEMTYPE_UC); /* reserved encoding */
    CHECK(memtype_with_pat(MEMTYPE_UNKNOWN, MEMTYPE_WB) == MEMTYPE_UNKNOWN);

    /* 4 MiB pages: only those spanning two types are split */
    bool split[1024];
    struct mtrr_set p = seabios();
    CHECK(memtype_split_large_pages(&p, 1, 4 * GIB, split) == 0); /* the hole starts on a 4 MiB boundary */
    add_var(&p, 1, 40 * MIB, 64 * KIB, MEMTYPE_UC);                /* inside [40, 44) MiB: pde 10 */
    add_var(&p, 2, 2 * GIB - 2 * MIB, 2 * MIB, MEMTYPE_WC);        /* the last 2 MiB of pde 511 */
    CHECK(memtype_split_large_pages(&p, 1, 4 * GIB, split) == 2);
    CHECK(split[10] && split[511] && !split[9] && !split[11] && !split[512] && !split[0]);
    CHECK(memtype_split_large_pages(&p, 1, 128 * MIB, split) == 1); /* above the map's top: not mapped */
    CHECK(split[10] && !split[511]);
    CHECK(memtype_split_large_pages(&p, 11, 4 * GIB, split) == 1 && !split[10]); /* below from_pde */
    struct mtrr_set q = seabios();
    add_var(&q, 1, 0, 128 * MIB, MEMTYPE_WB); /* WB over WB: still one type */
    CHECK(memtype_split_large_pages(&q, 1, 4 * GIB, split) == 0);
    CHECK(memtype_split_large_pages(&none, 1, 4 * GIB, split) == 0); /* nothing known: nothing split */

    return unit_finish();
}
