#include "lib/crc32.h"

#include <stdbool.h>

static uint32_t table[256];
static bool table_ready;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    table_ready = true;
}

uint32_t crc32_update(uint32_t state, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (!table_ready)
        make_table();
    while (len--)
        state = table[(state ^ *p++) & 0xff] ^ (state >> 8);
    return state;
}

uint32_t crc32(const void *data, size_t len)
{
    return crc32_final(crc32_update(CRC32_INIT, data, len));
}
