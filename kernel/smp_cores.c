#include "kernel/smp_cores.h"

#include "kernel/smp.h"

bool smp_siblings(uint32_t a, uint32_t b)
{
    const struct smp_summary *s = smp_summary();
    return s->cores && a != b && a < s->used && b < s->used && s->core_ids[a] == s->core_ids[b];
}

bool smp_any_siblings(uint32_t k)
{
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = a + 1; b < k; b++)
            if (smp_siblings(a, b))
                return true;
    return false;
}
