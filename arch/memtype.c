#include "arch/memtype.h"

#define LARGE_PAGE (4ull << 20)

const char *memtype_name(enum memtype t)
{
    switch (t) {
    case MEMTYPE_UC: return "uc";
    case MEMTYPE_WC: return "wc";
    case MEMTYPE_WT: return "wt";
    case MEMTYPE_WP: return "wp";
    case MEMTYPE_WB: return "wb";
    case MEMTYPE_UC_MINUS: return "uc-";
    case MEMTYPE_MIXED: return "mixed";
    case MEMTYPE_UNKNOWN: return "unknown";
    }
    return "reserved"; /* an encoding the SDM reserves: firmware wrote nonsense */
}

/* Which fixed range holds addr (< 1 MiB): 8 of 64 KiB, 16 of 16 KiB, 64 of 4 KiB. */
static uint32_t fixed_index(uint64_t addr)
{
    if (addr < 0x80000)
        return (uint32_t)(addr >> 16);
    if (addr < 0xC0000)
        return 8 + (uint32_t)((addr - 0x80000) >> 14);
    return 24 + (uint32_t)((addr - 0xC0000) >> 12);
}

static uint64_t fixed_next(uint64_t addr)
{
    uint64_t step = addr < 0x80000 ? 0x10000 : addr < 0xC0000 ? 0x4000 : 0x1000;
    return (addr & ~(step - 1)) + step;
}

static bool var_matches(const struct mtrr_var *v, uint64_t addr)
{
    return v->valid && (addr & v->mask) == (v->base & v->mask);
}

/* SDM "MTRR precedences": UC wins; WT beats WB; the same type is that
 * type; any other overlap is undefined, answered UC (never measured as
 * if it were cached). */
static enum memtype overlap(enum memtype a, uint8_t b)
{
    if (a == b)
        return a;
    if (a == MEMTYPE_UC || b == MEMTYPE_UC)
        return MEMTYPE_UC;
    if ((a == MEMTYPE_WT && b == MEMTYPE_WB) || (a == MEMTYPE_WB && b == MEMTYPE_WT))
        return MEMTYPE_WT;
    return MEMTYPE_UC;
}

enum memtype memtype_at(const struct mtrr_set *s, uint64_t addr)
{
    if (!s->present)
        return MEMTYPE_UNKNOWN;
    if (!s->enabled)
        return MEMTYPE_UC;
    if (s->fixed_enabled && addr < MTRR_FIXED_END)
        return (enum memtype)s->fixed[fixed_index(addr)];
    bool any = false;
    enum memtype t = MEMTYPE_UC;
    for (uint32_t i = 0; i < s->nvar; i++) {
        if (!var_matches(&s->var[i], addr))
            continue;
        t = any ? overlap(t, s->var[i].type) : (enum memtype)s->var[i].type;
        any = true;
    }
    return any ? t : (enum memtype)s->def_type;
}

/* The lowest mask bit: a range's match can change only at its multiples. */
static uint64_t granule(uint64_t mask) { return mask & (~mask + 1); }

/* The next address above addr where the type may change. A range whose
 * mask is contiguous (every bit from its granule up) matches one block
 * [base, base + granule): its edges. Any other mask (allowed, never seen
 * in practice) may change at each multiple of its granule. */
static uint64_t next_change(const struct mtrr_set *s, uint64_t addr)
{
    uint64_t next = ~0ull;
    if (s->fixed_enabled && addr < MTRR_FIXED_END)
        next = fixed_next(addr);
    for (uint32_t i = 0; i < s->nvar; i++) {
        const struct mtrr_var *v = &s->var[i];
        uint64_t g = granule(v->mask);
        if (!v->valid || !g)
            continue;
        uint64_t width_end = (v->mask | (g - 1)) + 1; /* 2^width when contiguous */
        bool contiguous = (width_end & (width_end - 1)) == 0; /* 0: the mask ran to bit 63 */
        uint64_t lo = v->base & v->mask, cand;
        if (contiguous)
            cand = addr < lo ? lo : addr < lo + g ? lo + g : ~0ull;
        else
            cand = (addr & ~(g - 1)) + g;
        if (cand > addr && cand < next)
            next = cand;
    }
    return next;
}

enum memtype memtype_range(const struct mtrr_set *s, uint64_t base, uint64_t end, uint64_t *first_other)
{
    if (!s->present)
        return MEMTYPE_UNKNOWN;
    if (end <= base)
        return memtype_at(s, base);
    enum memtype t = memtype_at(s, base);
    if (!s->enabled)
        return t;
    for (uint64_t a = next_change(s, base); a < end; a = next_change(s, a)) {
        if (memtype_at(s, a) != t) {
            if (first_other)
                *first_other = a;
            return MEMTYPE_MIXED;
        }
    }
    return t;
}

enum memtype memtype_with_pat(enum memtype mtrr_type, uint8_t pat_type)
{
    if (mtrr_type == MEMTYPE_UNKNOWN || mtrr_type == MEMTYPE_MIXED)
        return mtrr_type;
    switch (pat_type) {
    case MEMTYPE_WB:
        return mtrr_type;
    case MEMTYPE_WC:
        return MEMTYPE_WC;
    case MEMTYPE_UC_MINUS:
        return mtrr_type == MEMTYPE_WC ? MEMTYPE_WC : MEMTYPE_UC;
    case MEMTYPE_WT:
        return mtrr_type == MEMTYPE_WT || mtrr_type == MEMTYPE_WB ? MEMTYPE_WT
               : mtrr_type == MEMTYPE_WP                          ? MEMTYPE_WP
                                                                  : MEMTYPE_UC;
    case MEMTYPE_WP:
        return mtrr_type == MEMTYPE_UC || mtrr_type == MEMTYPE_WC ? MEMTYPE_UC : MEMTYPE_WP;
    }
    return MEMTYPE_UC; /* UC, or a reserved encoding */
}

uint32_t memtype_split_large_pages(const struct mtrr_set *s, uint32_t from_pde, uint64_t top, bool split[1024])
{
    uint32_t n = 0;
    for (uint32_t pde = 0; pde < 1024; pde++) {
        uint64_t base = pde * LARGE_PAGE;
        split[pde] = pde >= from_pde && base < top && s->present &&
                     memtype_range(s, base, base + LARGE_PAGE, 0) == MEMTYPE_MIXED;
        n += split[pde];
    }
    return n;
}
