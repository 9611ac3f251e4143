#include "kernel/recordlog.h"

#include "kernel/memory.h"

static enum qr_mode mode = QR_AUTO;
static uint8_t *buf;
static size_t cap, used;
static bool cut;

void recordlog_init(enum qr_mode qr)
{
    mode = qr;
    if (mode == QR_OFF)
        return;
    /* Page-aligned, taken before anything else asks: the benchmarks' 4 MiB
     * aligned buffers are not moved by it. Halve on a small machine. */
    for (cap = RECORDLOG_MAX; cap >= RECORDLOG_MIN; cap /= 2)
        if ((buf = memory_alloc((uint32_t)cap, 4096)) != 0)
            return;
    cap = 0;
}

enum qr_mode recordlog_qr_mode(void) { return mode; }

void recordlog_append(const char *s, size_t n)
{
    if (!buf)
        return;
    if (n > cap - used) {
        n = cap - used;
        cut = true;
    }
    for (size_t i = 0; i < n; i++)
        buf[used + i] = (uint8_t)s[i];
    used += n;
}

const uint8_t *recordlog_data(size_t *len)
{
    *len = used;
    return buf;
}

bool recordlog_cut(void) { return cut; }
