#include "bench/fill_user.h"

#include "arch/x86.h"
#include "lib/config.h"

static void zero_tail(uint8_t *buf, uint32_t from, uint32_t size)
{
    for (uint32_t i = from; i < size; i++)
        ((volatile uint8_t *)buf)[i] = 0;
}

void fill_buffer(uint8_t *buf, uint32_t size, uint32_t kind)
{
    if (kind == FILL_LOOP) {
        store_loop_dwords(buf, size / 4);
    } else if (kind == FILL_SSE) {
        sse_store_blocks(buf, size / 16);
        rep_stosd(buf + (size & ~15u), 0, (size & 15) / 4);
    } else {
        rep_stosd(buf, 0, size / 4);
    }
    zero_tail(buf, size & ~3u, size);
}
