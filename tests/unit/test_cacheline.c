#include "lib/cacheline.h"
#include "unit.h"

int main(void)
{
    /* falseshare's and isolation's one-line layout: an int per worker, 4 bytes apart */
    const struct cacheline_layout packed = { 0, 4, 1, 0 };
    CHECK(cacheline_count(&packed, 1, 64) == 1);
    CHECK(cacheline_count(&packed, 16, 64) == 1);
    CHECK(cacheline_count(&packed, 17, 64) == 2); /* SMP_MAX_CPUS is 32: past 16 it is two lines */
    CHECK(cacheline_count(&packed, 32, 64) == 2);
    CHECK(cacheline_count(&packed, 32, 128) == 1); /* a machine with longer lines */
    /* padded: a line each */
    const struct cacheline_layout padded = { 0, 64, 1, 0 };
    CHECK(cacheline_count(&padded, 32, 64) == 32);
    CHECK(cacheline_count(&padded, 32, 128) == 16);
    /* Predator's 64-byte objects, five sums 8 bytes apart from byte 24 of each, the array at byte
     * 0, 24, 56 of a line: a line each, one more (neighbours share), a line each */
    const struct cacheline_layout at0 = { 24, 64, 5, 8 }, at24 = { 48, 64, 5, 8 }, at56 = { 80, 64, 5, 8 };
    CHECK(cacheline_count(&at0, 32, 64) == 32);
    CHECK(cacheline_count(&at24, 32, 64) == 33);
    CHECK(cacheline_count(&at24, 1, 64) == 2);
    CHECK(cacheline_count(&at56, 32, 64) == 32);
    /* a word across a line's end counts both lines; a gap of untouched lines counts none */
    const struct cacheline_layout straddle = { 62, 4, 1, 0 }, apart = { 0, 256, 1, 0 };
    CHECK(cacheline_count(&straddle, 1, 64) == 2);
    CHECK(cacheline_count(&apart, 3, 64) == 3);
    CHECK(cacheline_count(&packed, 0, 64) == 0);
    /* the words' addresses as params.addrs carries them: hex, a comma between, whole or not at all */
    const uint32_t at[3] = { 0x80c1040u, 0x80c1044u, 0xfffffffcu };
    char text[CACHELINE_ADDRS_TEXT(3)];
    CHECK(cacheline_addrs(text, sizeof text, at, 3) == 30);
    CHECK_STR(text, "0x80c1040,0x80c1044,0xfffffffc");
    CHECK(cacheline_addrs(text, sizeof text, at, 0) == 0 && text[0] == 0);
    char short_text[CACHELINE_ADDRS_TEXT(2)];
    CHECK(cacheline_addrs(short_text, sizeof short_text, at, 3) == 19);
    CHECK_STR(short_text, "0x80c1040,0x80c1044");
    return unit_finish();
}
