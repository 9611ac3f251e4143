#include "lib/regions.h"

void regions_init(struct region_set *s)
{
    s->n = 0;
    s->dropped = 0;
    s->dropped_bytes = 0;
}

static void remove_at(struct region_set *s, uint32_t i)
{
    for (; i + 1 < s->n; i++)
        s->r[i] = s->r[i + 1];
    s->n--;
}

static void insert_at(struct region_set *s, uint32_t i, uint64_t base, uint64_t end)
{
    if (s->n >= REGIONS_MAX) {
        /* Full: keep the larger pieces, which benchmarks can use, and count
         * what is lost. Only memory_init adds and removes, before anything
         * is handed out, so no allocation lives in a dropped region. */
        uint32_t smallest = 0;
        for (uint32_t j = 1; j < s->n; j++)
            if (s->r[j].end - s->r[j].base < s->r[smallest].end - s->r[smallest].base)
                smallest = j;
        s->dropped++;
        if (end - base <= s->r[smallest].end - s->r[smallest].base) {
            s->dropped_bytes += end - base;
            return;
        }
        s->dropped_bytes += s->r[smallest].end - s->r[smallest].base;
        remove_at(s, smallest);
        if (smallest < i)
            i--;
    }
    for (uint32_t j = s->n; j > i; j--)
        s->r[j] = s->r[j - 1];
    s->r[i] = (struct region){ base, end, base };
    s->n++;
}

void regions_add(struct region_set *s, uint64_t base, uint64_t len)
{
    uint64_t end = base + len;
    if (len == 0 || end < base)
        return;
    uint32_t i = 0;
    while (i < s->n && s->r[i].end < base)
        i++;
    /* merge every region that overlaps or touches [base, end) */
    while (i < s->n && s->r[i].base <= end) {
        if (s->r[i].base < base)
            base = s->r[i].base;
        if (s->r[i].end > end)
            end = s->r[i].end;
        remove_at(s, i);
    }
    insert_at(s, i, base, end);
}

void regions_remove(struct region_set *s, uint64_t base, uint64_t end)
{
    if (end <= base)
        return; /* an empty range would otherwise split a region in two at base */
    for (uint32_t i = 0; i < s->n;) {
        struct region *r = &s->r[i];
        if (r->end <= base || r->base >= end) {
            i++;
            continue;
        }
        if (r->base < base && r->end > end) { /* split in two */
            uint64_t tail_end = r->end;
            r->end = base;
            if (r->next > r->end)
                r->next = r->end;
            insert_at(s, i + 1, end, tail_end);
            return;
        }
        if (r->base >= base && r->end <= end) {
            remove_at(s, i);
            continue;
        }
        if (r->base < base)
            r->end = base;
        else
            r->base = end;
        if (r->next < r->base)
            r->next = r->base;
        if (r->next > r->end)
            r->next = r->end;
        i++;
    }
}

uint64_t regions_total(const struct region_set *s)
{
    uint64_t t = 0;
    for (uint32_t i = 0; i < s->n; i++)
        t += s->r[i].end - s->r[i].base;
    return t;
}

uint64_t regions_largest_free(const struct region_set *s)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->r[i].end - s->r[i].next > best)
            best = s->r[i].end - s->r[i].next;
    return best;
}

bool regions_alloc(struct region_set *s, uint64_t size, uint64_t align, uint64_t *out)
{
    if (align == 0 || (align & (align - 1)))
        return false;
    for (uint32_t i = 0; i < s->n; i++) {
        struct region *r = &s->r[i];
        uint64_t at = (r->next + align - 1) & ~(align - 1);
        if (at < r->next || at > r->end || r->end - at < size)
            continue;
        r->next = at + size;
        *out = at;
        return true;
    }
    return false;
}

void regions_mark(const struct region_set *s, struct region_mark *m)
{
    m->n = s->n;
    for (uint32_t i = 0; i < s->n; i++)
        m->next[i] = s->r[i].next;
}

void regions_release(struct region_set *s, const struct region_mark *m)
{
    for (uint32_t i = 0; i < s->n && i < m->n; i++)
        s->r[i].next = m->next[i];
}

bool regions_contains(const struct region_set *s, uint64_t base, uint64_t len)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (base >= s->r[i].base && base + len <= s->r[i].end && base + len >= base)
            return true;
    return false;
}
