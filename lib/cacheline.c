#include "lib/cacheline.h"

#include "lib/fmt.h"

static uint32_t word_at(const struct cacheline_layout *at, uint32_t w, uint32_t i)
{
    return at->first + w * at->step + i * at->gap;
}

/* Every line from the lowest word's to the highest's that one of them
 * touches (k * words is at most a few hundred: no sorting needed). */
uint32_t cacheline_count(const struct cacheline_layout *at, uint32_t k, uint32_t line)
{
    if (!k || !at->words || !line)
        return 0;
    uint32_t lo = UINT32_MAX, hi = 0, count = 0;
    for (uint32_t w = 0; w < k; w++)
        for (uint32_t i = 0; i < at->words; i++) {
            uint32_t a = word_at(at, w, i);
            lo = a / line < lo ? a / line : lo;
            hi = (a + sizeof(uint32_t) - 1) / line > hi ? (a + sizeof(uint32_t) - 1) / line : hi;
        }
    for (uint32_t l = lo; l <= hi; l++) {
        uint32_t held = 0;
        for (uint32_t w = 0; w < k && !held; w++)
            for (uint32_t i = 0; i < at->words && !held; i++) {
                uint32_t a = word_at(at, w, i);
                held = a / line <= l && l <= (a + sizeof(uint32_t) - 1) / line;
            }
        count += held;
    }
    return count;
}

size_t cacheline_addrs(char *out, size_t size, const uint32_t *addrs, uint32_t k)
{
    const size_t most = 11; /* ",0x" and 8 hex digits: an address is written whole or not at all */
    size_t len = 0;
    if (size)
        out[0] = 0;
    for (uint32_t w = 0; w < k && size - len > most; w++)
        len += fmt(out + len, size - len, "%s0x%x", w ? "," : "", (unsigned)addrs[w]);
    return len;
}
