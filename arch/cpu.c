#include "arch/cpu.h"

#include "arch/mmu.h"
#include "arch/x86.h"
#include "lib/string.h"

/* Where each feature bit lives. Words: 0 = leaf 1 EDX, 1 = leaf 1 ECX,
 * 2 = leaf 7 EBX, 3 = 0x80000001 EDX, 4 = 0x80000007 EDX, 5 = 0x80000001 ECX. */
enum { W_1EDX, W_1ECX, W_7EBX, W_E1EDX, W_E7EDX, W_E1ECX };
_Static_assert(W_E1ECX < sizeof ((struct cpu_info *)0)->feature_words / sizeof(uint32_t), "feature_words too small");

static const struct {
    const char *name;
    uint8_t word, bit;
} features[FEAT_COUNT] = {
    [FEAT_FPU] = { "fpu", W_1EDX, 0 },       [FEAT_VME] = { "vme", W_1EDX, 1 },
    [FEAT_DE] = { "de", W_1EDX, 2 },         [FEAT_PSE] = { "pse", W_1EDX, 3 },
    [FEAT_TSC] = { "tsc", W_1EDX, 4 },       [FEAT_MSR] = { "msr", W_1EDX, 5 },
    [FEAT_PAE] = { "pae", W_1EDX, 6 },       [FEAT_MCE] = { "mce", W_1EDX, 7 },
    [FEAT_CX8] = { "cx8", W_1EDX, 8 },       [FEAT_APIC] = { "apic", W_1EDX, 9 },
    [FEAT_SEP] = { "sep", W_1EDX, 11 },      [FEAT_MTRR] = { "mtrr", W_1EDX, 12 },
    [FEAT_PGE] = { "pge", W_1EDX, 13 },      [FEAT_MCA] = { "mca", W_1EDX, 14 },
    [FEAT_CMOV] = { "cmov", W_1EDX, 15 },    [FEAT_PAT] = { "pat", W_1EDX, 16 },
    [FEAT_PSE36] = { "pse36", W_1EDX, 17 },  [FEAT_CLFLUSH] = { "clflush", W_1EDX, 19 },
    [FEAT_MMX] = { "mmx", W_1EDX, 23 },      [FEAT_FXSR] = { "fxsr", W_1EDX, 24 },
    [FEAT_SSE] = { "sse", W_1EDX, 25 },      [FEAT_SSE2] = { "sse2", W_1EDX, 26 },
    [FEAT_HTT] = { "htt", W_1EDX, 28 },
    [FEAT_SSE3] = { "sse3", W_1ECX, 0 },     [FEAT_PCLMULQDQ] = { "pclmulqdq", W_1ECX, 1 },
    [FEAT_MONITOR] = { "monitor", W_1ECX, 3 }, [FEAT_SSSE3] = { "ssse3", W_1ECX, 9 },
    [FEAT_FMA] = { "fma", W_1ECX, 12 },      [FEAT_CX16] = { "cx16", W_1ECX, 13 },
    [FEAT_PCID] = { "pcid", W_1ECX, 17 },    [FEAT_SSE4_1] = { "sse4_1", W_1ECX, 19 },
    [FEAT_SSE4_2] = { "sse4_2", W_1ECX, 20 }, [FEAT_X2APIC] = { "x2apic", W_1ECX, 21 },
    [FEAT_MOVBE] = { "movbe", W_1ECX, 22 },  [FEAT_POPCNT] = { "popcnt", W_1ECX, 23 },
    [FEAT_TSC_DEADLINE] = { "tsc_deadline", W_1ECX, 24 }, [FEAT_AES] = { "aes", W_1ECX, 25 },
    [FEAT_XSAVE] = { "xsave", W_1ECX, 26 },  [FEAT_AVX] = { "avx", W_1ECX, 28 },
    [FEAT_F16C] = { "f16c", W_1ECX, 29 },    [FEAT_RDRAND] = { "rdrand", W_1ECX, 30 },
    [FEAT_HYPERVISOR] = { "hypervisor", W_1ECX, 31 },
    [FEAT_SMEP] = { "smep", W_7EBX, 7 },     [FEAT_ERMS] = { "erms", W_7EBX, 9 },
    [FEAT_INVPCID] = { "invpcid", W_7EBX, 10 }, [FEAT_AVX2] = { "avx2", W_7EBX, 5 },
    [FEAT_SMAP] = { "smap", W_7EBX, 20 },
    [FEAT_SYSCALL] = { "syscall", W_E1EDX, 11 }, [FEAT_NX] = { "nx", W_E1EDX, 20 },
    [FEAT_PDPE1GB] = { "pdpe1gb", W_E1EDX, 26 }, [FEAT_RDTSCP] = { "rdtscp", W_E1EDX, 27 },
    [FEAT_LM] = { "lm", W_E1EDX, 29 },
    [FEAT_TOPOEXT] = { "topoext", W_E1ECX, 22 }, /* AMD: CPUID 0x8000001D describes the caches */
    [FEAT_INVTSC] = { "invtsc", W_E7EDX, 8 },
};

static struct cpu_info info;

const struct cpu_info *cpu_info(void) { return &info; }

bool cpu_has(enum cpu_feature f)
{
    return f < FEAT_COUNT && (info.feature_words[features[f].word] >> features[f].bit) & 1;
}

const char *cpu_feature_name(enum cpu_feature f) { return f < FEAT_COUNT ? features[f].name : "?"; }

const char *cpu_cache_type_name(uint32_t type)
{
    switch (type) {
    case CACHE_DATA: return "data";
    case CACHE_INSTRUCTION: return "instruction";
    case CACHE_UNIFIED: return "unified";
    case CACHE_TRACE: return "trace";
    }
    return "unknown";
}

/* CPUID exists when EFLAGS.ID can be toggled (not on a 386 or early 486). */
bool cpu_detect_cpuid(void)
{
    uint32_t before = read_eflags();
    write_eflags(before ^ EFLAGS_ID);
    uint32_t after = read_eflags();
    write_eflags(before);
    return ((before ^ after) & EFLAGS_ID) != 0;
}

/* The highest extended leaf, 0 when there are none. */
static uint32_t ext_leaves(void)
{
    uint32_t max = cpuid(0x80000000, 0).eax;
    return max < 0x80000000 || max > 0x8000ffff ? 0 : max; /* no extended leaves: the value is garbage */
}

static void read_features(uint32_t *words, uint32_t max_leaf, uint32_t max_ext)
{
    if (max_leaf >= 1) {
        struct cpuid_regs r = cpuid(1, 0);
        words[W_1EDX] = r.edx;
        words[W_1ECX] = r.ecx;
    }
    if (max_leaf >= 7)
        words[W_7EBX] = cpuid(7, 0).ebx;
    if (max_ext >= 0x80000001) {
        struct cpuid_regs r = cpuid(0x80000001, 0);
        words[W_E1EDX] = r.edx;
        words[W_E1ECX] = r.ecx;
    }
    if (max_ext >= 0x80000007)
        words[W_E7EDX] = cpuid(0x80000007, 0).edx;
}

bool cpu_probe(enum cpu_feature f)
{
    uint32_t words[sizeof info.feature_words / sizeof info.feature_words[0]] = { 0 };
    if (f >= FEAT_COUNT || !cpu_detect_cpuid())
        return false;
    read_features(words, cpuid(0, 0).eax, ext_leaves());
    return (words[features[f].word] >> features[f].bit) & 1;
}

uint32_t cpu_phys_bits(void)
{
    uint32_t bits = 36;
    if (cpu_detect_cpuid() && ext_leaves() >= 0x80000008) {
        uint32_t b = cpuid(0x80000008, 0).eax & 0xff;
        if (b >= 32 && b <= 52)
            bits = b;
    }
    return bits;
}

static void regs_text(char *dst, const uint32_t *regs, int count)
{
    for (int r = 0; r < count; r++)
        for (int b = 0; b < 4; b++)
            dst[r * 4 + b] = (char)(regs[r] >> (8 * b));
    dst[count * 4] = 0;
}

static void add_cache(uint32_t level, uint32_t type, uint32_t size, uint32_t ways, uint32_t line)
{
    if (info.ncaches < CPU_MAX_CACHES && size)
        info.caches[info.ncaches++] = (struct cache_desc){ level, type, size, ways, line };
}

/* Intel's leaf 4 and AMD's 0x8000001D share one layout: one subleaf per
 * cache until type 0; ways, partitions, line size and sets, each minus one.
 * False when the leaf lists no cache. */
static bool caches_deterministic(uint32_t leaf)
{
    uint32_t before = info.ncaches;
    for (uint32_t i = 0; i < 16; i++) {
        struct cpuid_regs r = cpuid(leaf, i);
        uint32_t type = r.eax & 31;
        if (type == 0)
            break;
        uint32_t ways = (r.ebx >> 22) + 1, parts = ((r.ebx >> 12) & 0x3ff) + 1, line = (r.ebx & 0xfff) + 1;
        uint32_t sets = r.ecx + 1;
        add_cache((r.eax >> 5) & 7, type, ways * parts * line * sets, (r.eax >> 9) & 1 ? 0 : ways, line);
    }
    return info.ncaches > before;
}

#define AMD_WAYS_SEE_1D 9u /* "every field of this cache is in leaf 0x8000001D" */

/* AMD's encoded associativity of L2/L3 (0x80000006; AMD APM vol. 3,
 * appendix E): 15 is fully associative (ways 0 here). 0 (disabled), 7
 * (reserved) and 9 ("see 0x8000001D") give no associativity at all:
 * amd_ways_known() keeps such a cache out rather than print it 0-way. */
static uint32_t amd_ways(uint32_t code)
{
    static const uint8_t table[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };
    return table[code & 15];
}

static bool amd_ways_known(uint32_t code) { return code != 0 && code != 7 && code != AMD_WAYS_SEE_1D; }

/* The legacy AMD leaves: L1 from 0x80000005, L2 and L3 from 0x80000006.
 * False when a cache is coded "see 0x8000001D" (newer CPUs do that for
 * the L3, and under a hypervisor 0x80000006 may describe the host's chip):
 * that cache is left out, since its size is not the real one either. */
static bool caches_amd_legacy(void)
{
    struct cpuid_regs l1 = cpuid(0x80000005, 0);
    /* L1 associativity is a plain count, 0xff fully associative */
    uint32_t dways = (l1.ecx >> 16) & 0xff, iways = (l1.edx >> 16) & 0xff;
    add_cache(1, CACHE_DATA, (l1.ecx >> 24) << 10, dways == 0xff ? 0 : dways, l1.ecx & 0xff);
    add_cache(1, CACHE_INSTRUCTION, (l1.edx >> 24) << 10, iways == 0xff ? 0 : iways, l1.edx & 0xff);
    info.cache_leaf = "0x80000005";
    if (info.max_ext_leaf < 0x80000006)
        return true;
    struct cpuid_regs l2 = cpuid(0x80000006, 0);
    uint32_t l2code = (l2.ecx >> 12) & 15, l3code = (l2.edx >> 12) & 15;
    if (amd_ways_known(l2code))
        add_cache(2, CACHE_UNIFIED, (l2.ecx >> 16) << 10, amd_ways(l2code), l2.ecx & 0xff);
    if (amd_ways_known(l3code))
        add_cache(3, CACHE_UNIFIED, (l2.edx >> 18) * (512u << 10), amd_ways(l3code), l2.edx & 0xff);
    info.cache_leaf = "0x80000006";
    return l2code != AMD_WAYS_SEE_1D && l3code != AMD_WAYS_SEE_1D;
}

/* AMD: the cache topology leaf 0x8000001D where TopologyExtensions says it
 * exists (family 15h and later; under a hypervisor the only leaf that
 * describes the virtual CPU's L3 rather than the host chip's), else the
 * legacy leaves. */
static void caches_amd(void)
{
    info.cache_source = "amd";
    if (cpu_has(FEAT_TOPOEXT) && info.max_ext_leaf >= 0x8000001d && caches_deterministic(0x8000001d)) {
        info.cache_leaf = "0x8000001d";
        return;
    }
    if (caches_amd_legacy())
        return;
    /* A cache coded "see 0x8000001D" without TopologyExtensions: take that
     * leaf if it answers anyway; else keep the legacy list without it. */
    uint32_t legacy = info.ncaches;
    info.ncaches = 0;
    if (info.max_ext_leaf >= 0x8000001d && caches_deterministic(0x8000001d))
        info.cache_leaf = "0x8000001d";
    else
        info.ncaches = legacy; /* caches_deterministic added nothing: the legacy entries are intact */
}

/* Leaf 2 one-byte descriptors of older Intel CPUs (Intel SDM Vol. 2A,
 * table "Encoding of CPUID Leaf 2 Descriptors"); the common ones. */
static const struct {
    uint8_t code, level, type, ways, line;
    uint32_t kib;
} leaf2[] = {
    { 0x06, 1, CACHE_INSTRUCTION, 4, 32, 8 },    { 0x08, 1, CACHE_INSTRUCTION, 4, 32, 16 },
    { 0x09, 1, CACHE_INSTRUCTION, 4, 64, 32 },   { 0x0a, 1, CACHE_DATA, 2, 32, 8 },
    { 0x0c, 1, CACHE_DATA, 4, 32, 16 },          { 0x0d, 1, CACHE_DATA, 4, 64, 16 },
    { 0x0e, 1, CACHE_DATA, 6, 64, 24 },          { 0x1d, 2, CACHE_UNIFIED, 2, 64, 128 },
    { 0x21, 2, CACHE_UNIFIED, 8, 64, 256 },      { 0x22, 3, CACHE_UNIFIED, 4, 64, 512 },
    { 0x23, 3, CACHE_UNIFIED, 8, 64, 1024 },     { 0x24, 2, CACHE_UNIFIED, 16, 64, 1024 },
    { 0x25, 3, CACHE_UNIFIED, 8, 64, 2048 },     { 0x29, 3, CACHE_UNIFIED, 8, 64, 4096 },
    { 0x2c, 1, CACHE_DATA, 8, 64, 32 },          { 0x30, 1, CACHE_INSTRUCTION, 8, 64, 32 },
    { 0x41, 2, CACHE_UNIFIED, 4, 32, 128 },      { 0x42, 2, CACHE_UNIFIED, 4, 32, 256 },
    { 0x43, 2, CACHE_UNIFIED, 4, 32, 512 },      { 0x44, 2, CACHE_UNIFIED, 4, 32, 1024 },
    { 0x45, 2, CACHE_UNIFIED, 4, 32, 2048 },     { 0x46, 3, CACHE_UNIFIED, 4, 64, 4096 },
    { 0x47, 3, CACHE_UNIFIED, 8, 64, 8192 },     { 0x48, 2, CACHE_UNIFIED, 12, 64, 3072 },
    { 0x4a, 3, CACHE_UNIFIED, 12, 64, 6144 },    { 0x4b, 3, CACHE_UNIFIED, 16, 64, 8192 },
    { 0x4c, 3, CACHE_UNIFIED, 12, 64, 12288 },   { 0x4d, 3, CACHE_UNIFIED, 16, 64, 16384 },
    { 0x4e, 2, CACHE_UNIFIED, 24, 64, 6144 },    { 0x60, 1, CACHE_DATA, 8, 64, 16 },
    { 0x66, 1, CACHE_DATA, 4, 64, 8 },           { 0x67, 1, CACHE_DATA, 4, 64, 16 },
    { 0x68, 1, CACHE_DATA, 4, 64, 32 },          { 0x70, 1, CACHE_TRACE, 8, 0, 12 },
    { 0x71, 1, CACHE_TRACE, 8, 0, 16 },          { 0x72, 1, CACHE_TRACE, 8, 0, 32 },
    { 0x78, 2, CACHE_UNIFIED, 4, 64, 1024 },     { 0x79, 2, CACHE_UNIFIED, 8, 64, 128 },
    { 0x7a, 2, CACHE_UNIFIED, 8, 64, 256 },      { 0x7b, 2, CACHE_UNIFIED, 8, 64, 512 },
    { 0x7c, 2, CACHE_UNIFIED, 8, 64, 1024 },     { 0x7d, 2, CACHE_UNIFIED, 8, 64, 2048 },
    { 0x7f, 2, CACHE_UNIFIED, 2, 64, 512 },      { 0x80, 2, CACHE_UNIFIED, 8, 64, 512 },
    { 0x82, 2, CACHE_UNIFIED, 8, 32, 256 },      { 0x83, 2, CACHE_UNIFIED, 8, 32, 512 },
    { 0x84, 2, CACHE_UNIFIED, 8, 32, 1024 },     { 0x85, 2, CACHE_UNIFIED, 8, 32, 2048 },
    { 0x86, 2, CACHE_UNIFIED, 4, 64, 512 },      { 0x87, 2, CACHE_UNIFIED, 8, 64, 1024 },
};

static bool caches_leaf2(void)
{
    struct cpuid_regs r = cpuid(2, 0);
    uint32_t regs[4] = { r.eax & ~0xffu, r.ebx, r.ecx, r.edx }; /* AL is the iteration count */
    bool defer_to_leaf4 = false;
    for (int i = 0; i < 4; i++) {
        if (regs[i] & 0x80000000u)
            continue; /* register holds no descriptors */
        for (int b = 0; b < 4; b++) {
            uint8_t code = (uint8_t)(regs[i] >> (8 * b));
            if (code == 0xff)
                defer_to_leaf4 = true;
            for (unsigned k = 0; k < sizeof leaf2 / sizeof leaf2[0]; k++)
                if (leaf2[k].code == code)
                    add_cache(leaf2[k].level, leaf2[k].type, leaf2[k].kib << 10, leaf2[k].ways, leaf2[k].line);
        }
    }
    info.cache_source = "leaf2";
    info.cache_leaf = "2";
    return !defer_to_leaf4;
}

void cpu_identify(void)
{
    memset(&info, 0, sizeof info);
    info.cache_source = "none";
    info.cache_leaf = "none";
    info.has_cpuid = cpu_detect_cpuid();
    if (!info.has_cpuid) {
        str_copy(info.vendor, "unknown", sizeof info.vendor);
        info.family = 4; /* a CPU without CPUID is a 386 or an early 486 */
        return;
    }
    struct cpuid_regs r = cpuid(0, 0);
    info.max_leaf = r.eax;
    uint32_t v[3] = { r.ebx, r.edx, r.ecx };
    regs_text(info.vendor, v, 3);
    if (info.max_leaf >= 1) {
        r = cpuid(1, 0);
        uint32_t base_family = (r.eax >> 8) & 15, base_model = (r.eax >> 4) & 15;
        info.family = base_family == 15 ? base_family + ((r.eax >> 20) & 0xff) : base_family;
        info.model = base_family == 6 || base_family == 15 ? base_model | ((r.eax >> 12) & 0xf0) : base_model;
        info.stepping = r.eax & 15;
    }
    info.max_ext_leaf = ext_leaves();
    read_features(info.feature_words, info.max_leaf, info.max_ext_leaf);
    if (info.max_ext_leaf >= 0x80000004) {
        uint32_t b[12];
        for (uint32_t i = 0; i < 3; i++) {
            r = cpuid(0x80000002 + i, 0);
            b[i * 4] = r.eax, b[i * 4 + 1] = r.ebx, b[i * 4 + 2] = r.ecx, b[i * 4 + 3] = r.edx;
        }
        regs_text(info.brand, b, 12);
        /* trim the leading blanks some CPUs pad the brand with */
        size_t lead = 0;
        while (info.brand[lead] == ' ')
            lead++;
        memmove(info.brand, info.brand + lead, sizeof info.brand - lead);
    }
    if (cpu_has(FEAT_HYPERVISOR)) {
        r = cpuid(0x40000000, 0);
        uint32_t h[3] = { r.ebx, r.ecx, r.edx };
        regs_text(info.hypervisor, h, 3);
    }
    bool amd = str_eq(info.vendor, "AuthenticAMD") || str_eq(info.vendor, "HygonGenuine");
    if (amd && info.max_ext_leaf >= 0x80000005)
        caches_amd();
    else if (info.max_leaf >= 4 && str_eq(info.vendor, "GenuineIntel") && caches_deterministic(4))
        info.cache_source = "leaf4", info.cache_leaf = "4";
    else if (info.max_leaf >= 2 && !caches_leaf2() && info.max_leaf >= 4) {
        info.ncaches = 0; /* descriptor 0xff: leaf 4 has the real list */
        caches_deterministic(4);
        info.cache_source = "leaf4", info.cache_leaf = "4";
    }
}

/* ceil(log2(n)) for n >= 1 */
static uint32_t bits_for(uint32_t n)
{
    uint32_t b = 0;
    while ((1u << b) < n)
        b++;
    return b;
}

uint32_t cpu_smt_bits(const char **how)
{
    *how = 0;
    if (!info.has_cpuid)
        return 0;
    if (info.max_leaf >= 0xb) {
        struct cpuid_regs r = cpuid(0xb, 0);
        if (((r.ecx >> 8) & 0xff) == 1) { /* level 0 is the SMT level: its shift */
            *how = "cpuid_0b";
            return r.eax & 0x1f;
        }
    }
    if (cpu_has(FEAT_TOPOEXT) && info.max_ext_leaf >= 0x8000001e) {
        *how = "cpuid_8000001e";
        return bits_for(((cpuid(0x8000001e, 0).ebx >> 8) & 0xff) + 1);
    }
    if (!cpu_has(FEAT_HTT)) {
        *how = "no_htt";
        return 0;
    }
    if (info.max_leaf >= 4) {
        uint32_t logical = (cpuid(1, 0).ebx >> 16) & 0xff, cores = (cpuid(4, 0).eax >> 26) + 1;
        if (logical && logical >= cores) {
            *how = "cpuid_01_04";
            return bits_for(logical) - bits_for(cores);
        }
    }
    return 0;
}
