#include "lib/regions.h"
#include "unit.h"

#define MIB (1ull << 20)

int main(void)
{
    struct region_set s;
    regions_init(&s);
    /* a PC-like map: low memory, a hole, RAM from 1 MiB, overlapping and touching pieces */
    regions_add(&s, 0, 640 * 1024);
    regions_add(&s, MIB, 63 * MIB);
    regions_add(&s, 64 * MIB, 64 * MIB);   /* touches: merged */
    regions_add(&s, 100 * MIB, 10 * MIB);  /* inside: merged */
    CHECK(s.n == 2);
    CHECK(s.r[1].base == MIB && s.r[1].end == 128 * MIB);

    regions_remove(&s, 0, MIB);                 /* low memory out */
    regions_remove(&s, MIB, MIB + 300 * 1024);  /* the kernel image */
    regions_remove(&s, 32 * MIB, 33 * MIB);     /* a hole in the middle: split */
    CHECK(s.n == 2);
    CHECK(s.r[0].base == MIB + 300 * 1024 && s.r[0].end == 32 * MIB);
    CHECK(s.r[1].base == 33 * MIB && s.r[1].end == 128 * MIB);
    CHECK(regions_total(&s) == (32 * MIB - MIB - 300 * 1024) + 95 * MIB);
    CHECK(regions_largest_free(&s) == 95 * MIB);

    /* aligned, disjoint, inside, and bounded */
    struct region_mark m;
    regions_mark(&s, &m);
    uint64_t a, b, c, d;
    CHECK(regions_alloc(&s, 1000, 4096, &a) && a % 4096 == 0 && regions_contains(&s, a, 1000));
    CHECK(regions_alloc(&s, 40 * MIB, 4 * MIB, &b) && b % (4 * MIB) == 0 && b >= 33 * MIB);
    CHECK(regions_alloc(&s, 10, 16, &c) && (c + 10 <= b || c >= b + 40 * MIB) && (c >= a + 1000 || c + 10 <= a));
    CHECK(!regions_alloc(&s, 200 * MIB, 16, &d));
    CHECK(!regions_alloc(&s, 16, 3, &d));      /* alignment not a power of two */
    CHECK(regions_largest_free(&s) < 95 * MIB);
    regions_release(&s, &m);
    CHECK(regions_largest_free(&s) == 95 * MIB);

    /* nothing is handed out twice until released */
    regions_mark(&s, &m);
    uint64_t prev_end = 0;
    int ok = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t p;
        if (!regions_alloc(&s, 4096, 4096, &p)) {
            ok = 0;
            break;
        }
        ok &= p >= prev_end;
        prev_end = p + 4096;
    }
    CHECK(ok);
    regions_release(&s, &m);

    /* a map whose reserved entries overlap available ones, in either order:
     * memory_init adds every available entry, then removes every other one */
    regions_init(&s);
    regions_add(&s, 0, 640 * 1024);
    regions_add(&s, MIB, 127 * MIB);
    regions_add(&s, 200 * MIB, 8 * MIB);
    regions_remove(&s, 600 * 1024, MIB);            /* EBDA reserved, listed before the RAM it cuts */
    regions_remove(&s, 16 * MIB, 17 * MIB);         /* ACPI inside RAM: split */
    regions_remove(&s, 120 * MIB, 204 * MIB);       /* across the end of one region and into the next */
    regions_remove(&s, 206 * MIB, 206 * MIB);       /* empty: nothing */
    CHECK(s.n == 4);
    CHECK(s.r[0].base == 0 && s.r[0].end == 600 * 1024);
    CHECK(s.r[1].base == MIB && s.r[1].end == 16 * MIB);
    CHECK(s.r[2].base == 17 * MIB && s.r[2].end == 120 * MIB);
    CHECK(s.r[3].base == 204 * MIB && s.r[3].end == 208 * MIB);
    CHECK(!regions_contains(&s, 16 * MIB, 1) && !regions_contains(&s, 150 * MIB, 1));
    CHECK(s.dropped == 0 && s.dropped_bytes == 0);

    /* no silent limit: past REGIONS_MAX the smallest pieces go, and are counted */
    regions_init(&s);
    uint64_t lost = 0;
    for (uint32_t i = 0; i < REGIONS_MAX + 6; i++) {
        uint64_t len = 4096 * (1 + i); /* growing sizes, holes between */
        regions_add(&s, (uint64_t)i * 4 * MIB, len);
        if (i < 6)
            lost += len; /* the six smallest are the first six */
    }
    CHECK(s.n == REGIONS_MAX);
    CHECK(s.dropped == 6 && s.dropped_bytes == lost);
    CHECK(s.r[0].base == 6 * 4 * MIB);                /* still sorted, the smallest gone */
    for (uint32_t i = 1; i < s.n; i++)
        CHECK(s.r[i - 1].end < s.r[i].base);
    /* a split of a full set drops the smaller piece too */
    uint32_t before = s.dropped;
    uint64_t big_base = s.r[s.n - 1].base, big_end = s.r[s.n - 1].end;
    regions_remove(&s, big_base + 4096, big_base + 8192);
    CHECK(s.n == REGIONS_MAX && s.dropped == before + 1);
    CHECK(regions_contains(&s, big_base + 8192, big_end - big_base - 8192));
    /* a small region added to a full set is the one dropped */
    before = s.dropped;
    uint64_t bytes = s.dropped_bytes;
    regions_add(&s, 1000 * MIB, 1);
    CHECK(s.dropped == before + 1 && s.dropped_bytes == bytes + 1 && !regions_contains(&s, 1000 * MIB, 1));

    /* removing everything leaves an empty set that refuses requests */
    regions_remove(&s, 0, 1ull << 32);
    CHECK(s.n == 0 && regions_total(&s) == 0 && !regions_alloc(&s, 1, 1, &d));
    return unit_finish();
}
