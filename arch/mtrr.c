#include "arch/mtrr.h"

#include "arch/cpu.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/msr.h"
#include "arch/x86.h"
#include "lib/regions.h"

extern char _kernel_start[], _kernel_end[];

#define MTRRCAP_VCNT 0xffu
#define MTRRCAP_FIX (1u << 8)
#define DEF_TYPE_FE (1u << 10)
#define DEF_TYPE_E (1u << 11)
#define PHYSMASK_VALID (1u << 11)

static struct mtrr_set set;
static const char *state = "absent";
static uint32_t vcnt;
static bool have_pat;
static uint64_t pat_value;

const struct mtrr_set *mtrr_set(void) { return &set; }
const char *mtrr_state(void) { return state; }
uint32_t mtrr_var_count(void) { return vcnt; }

bool mtrr_pat(uint64_t *pat)
{
    if (have_pat)
        *pat = pat_value;
    return have_pat;
}

static uint64_t phys_mask(void) { return ((1ull << cpu_phys_bits()) - 1) & ~0xfffull; }

/* One fixed-range MSR holds eight one-byte types, lowest range first. */
static bool read_fixed(uint32_t msr, uint32_t first)
{
    uint64_t v;
    if (!msr_try_read(msr, &v))
        return false;
    for (uint32_t i = 0; i < 8; i++)
        set.fixed[first + i] = (uint8_t)(v >> (8 * i));
    return true;
}

static bool read_all(void)
{
    uint64_t cap, def;
    if (!msr_try_read(MSR_MTRRCAP, &cap) || !msr_try_read(MSR_MTRR_DEF_TYPE, &def))
        return false;
    vcnt = (uint32_t)cap & MTRRCAP_VCNT;
    set.def_type = (uint8_t)def;
    set.enabled = (def & DEF_TYPE_E) != 0;
    set.fixed_enabled = set.enabled && (cap & MTRRCAP_FIX) && (def & DEF_TYPE_FE);
    if (set.fixed_enabled) {
        bool ok = read_fixed(MSR_MTRR_FIX64K_00000, 0) && read_fixed(MSR_MTRR_FIX16K_80000, 8) &&
                  read_fixed(MSR_MTRR_FIX16K_A0000, 16);
        for (uint32_t i = 0; ok && i < 8; i++)
            ok = read_fixed(MSR_MTRR_FIX4K_C0000 + i, 24 + 8 * i);
        if (!ok)
            return false;
    }
    uint64_t width = phys_mask();
    set.nvar = vcnt < MTRR_VAR_MAX ? vcnt : MTRR_VAR_MAX;
    for (uint32_t i = 0; i < set.nvar; i++) {
        uint64_t base, mask;
        if (!msr_try_read(MSR_MTRR_PHYSBASE0 + 2 * i, &base) || !msr_try_read(MSR_MTRR_PHYSBASE0 + 2 * i + 1, &mask))
            return false;
        set.var[i] = (struct mtrr_var){ base & width, mask & width, (uint8_t)base, (mask & PHYSMASK_VALID) != 0 };
    }
    return true;
}

static const struct region_set *free_memory;

static void read_types(void)
{
    if (cpu_has(FEAT_PAT) && cpu_has(FEAT_MSR))
        have_pat = msr_try_read(MSR_PAT, &pat_value);
    if (!cpu_has(FEAT_MTRR) || !cpu_has(FEAT_MSR)) {
        state = "absent";
        return;
    }
    set.present = read_all();
    state = !set.present ? "unreadable" : set.enabled ? "on" : "off";
}

void mtrr_init(const struct region_set *free)
{
    free_memory = free;
    read_types();
}

enum memtype mtrr_range_type(uint64_t base, uint64_t end, uint64_t *first_other)
{
    enum memtype t = memtype_range(&set, base, end, first_other);
    return have_pat ? memtype_with_pat(t, (uint8_t)(pat_value & 7)) : t;
}

/* What the used memory adds up to, and the first range that is not write-back. */
struct used_type {
    bool any, bad;
    enum memtype all;
    uint64_t bad_base, bad_end;
    enum memtype bad_type;
};

static void fold(struct used_type *u, uint64_t base, uint64_t end)
{
    if (end <= base)
        return;
    uint64_t other = end;
    enum memtype t = mtrr_range_type(base, end, &other);
    u->all = !u->any || u->all == t ? t : MEMTYPE_MIXED;
    u->any = true;
    if (u->bad || t == MEMTYPE_WB)
        return;
    u->bad = true;
    u->bad_base = base;
    u->bad_end = end;
    u->bad_type = t;
    if (t == MEMTYPE_MIXED) { /* name the part that is not write-back */
        bool head_wb = mtrr_range_type(base, base + 1, 0) == MEMTYPE_WB;
        u->bad_base = head_wb ? other : base;
        u->bad_end = head_wb ? end : other;
        u->bad_type = mtrr_range_type(u->bad_base, u->bad_base + 1, 0);
    }
}

/* The kernel image and each region up to what is handed out (or all of it). */
static struct used_type memory_type(bool whole_regions)
{
    struct used_type u = { 0 };
    fold(&u, (uint32_t)_kernel_start, (uint32_t)_kernel_end);
    const struct region_set *r = free_memory;
    for (uint32_t i = 0; r && i < r->n; i++)
        fold(&u, r->r[i].base, whole_regions ? r->r[i].end : r->r[i].next);
    return u;
}

enum memtype mtrr_free_memory_type(void)
{
    if (!set.present)
        return MEMTYPE_UNKNOWN;
    struct used_type u = memory_type(true);
    return u.any ? u.all : MEMTYPE_UNKNOWN;
}

enum memtype mtrr_used_memory_type(uint64_t *bad_base, uint64_t *bad_end, enum memtype *bad_type)
{
    if (!set.present)
        return MEMTYPE_UNKNOWN;
    struct used_type u = memory_type(false);
    if (u.bad) {
        *bad_base = u.bad_base;
        *bad_end = u.bad_end;
        *bad_type = u.bad_type;
    }
    return u.any ? u.all : MEMTYPE_UNKNOWN;
}

#define PROVOKE_BLOCK (64u << 10)

/* SDM "MTRR Considerations in MP Systems", on one CPU: caches off and
 * written back, global pages off (a TLB flush), MTRRs off while one
 * changes, then everything back as it was. */
static void write_var(uint32_t i, uint64_t base, uint64_t mask)
{
    uint32_t cr0 = read_cr0(), cr4 = read_cr4();
    write_cr0((cr0 | CR0_CD) & ~CR0_NW);
    wbinvd();
    if (cr4 & CR4_PGE)
        write_cr4(cr4 & ~CR4_PGE);
    uint64_t def = rdmsr(MSR_MTRR_DEF_TYPE);
    wrmsr(MSR_MTRR_DEF_TYPE, def & ~(uint64_t)DEF_TYPE_E);
    wrmsr(MSR_MTRR_PHYSBASE0 + 2 * i, base);
    wrmsr(MSR_MTRR_PHYSBASE0 + 2 * i + 1, mask);
    wrmsr(MSR_MTRR_DEF_TYPE, def);
    wbinvd();
    write_cr4(cr4);
    if (cr4 & CR4_PGE)
        model_mark_tlb_flush_all(); /* PGE went off and on: global entries are gone too */
    write_cr0(cr0);
}

const char *mtrr_provoke_uncached(void)
{
    if (!set.present || !set.enabled)
        return "no MTRRs in use to program (mtrr is not on)";
    uint32_t slot = set.nvar;
    for (uint32_t i = 0; i < set.nvar && slot == set.nvar; i++)
        if (!set.var[i].valid)
            slot = i;
    const struct region_set *r = free_memory;
    if (slot == set.nvar || !r || r->n == 0)
        return "no free variable MTRR (or no free memory) to make uncacheable";
    /* first fit: the first region's next bytes are what the next allocation gets */
    uint64_t base = r->r[0].next & ~(uint64_t)(PROVOKE_BLOCK - 1);
    write_var(slot, base | MEMTYPE_UC, (phys_mask() & ~(uint64_t)(PROVOKE_BLOCK - 1)) | PHYSMASK_VALID);
    read_types();
    return 0;
}
