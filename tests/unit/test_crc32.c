#include "lib/crc32.h"
#include "unit.h"

int main(void)
{
    CHECK(crc32("123456789", 9) == 0xcbf43926u);
    CHECK(crc32("", 0) == 0);
    const char *ex = "{\"t\":\"hello\",\"seq\":0,\"proto\":1,\"kernel\":\"0.1.0\",\"cmdline\":\"suite=quick exit=qemu\"}";
    CHECK(crc32(ex, strlen(ex)) == 0x22317d96u);
    /* streaming over every split point equals one pass */
    size_t n = strlen(ex);
    int same = 1;
    for (size_t k = 0; k <= n; k++) {
        uint32_t s = crc32_update(CRC32_INIT, ex, k);
        s = crc32_update(s, ex + k, n - k);
        same &= crc32_final(s) == 0x22317d96u;
    }
    CHECK(same);
    /* a one-bit flip changes it */
    char flipped[128];
    strcpy(flipped, ex);
    flipped[20] ^= 1;
    CHECK(crc32(flipped, n) != 0x22317d96u);
    return unit_finish();
}
