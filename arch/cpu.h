/* CPU identification: vendor, family/model/stepping, brand, features and
 * caches, read once at boot. Each feature is encoded once as (leaf,
 * register, bit), so checks read like sentences: cpu_has(FEAT_TSC). */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdbool.h>
#include <stdint.h>

enum cpu_feature {
    FEAT_FPU, FEAT_VME, FEAT_DE, FEAT_PSE, FEAT_TSC, FEAT_MSR, FEAT_PAE, FEAT_MCE, FEAT_CX8,
    FEAT_APIC, FEAT_SEP, FEAT_MTRR, FEAT_PGE, FEAT_MCA, FEAT_CMOV, FEAT_PAT, FEAT_PSE36,
    FEAT_CLFLUSH, FEAT_MMX, FEAT_FXSR, FEAT_SSE, FEAT_SSE2, FEAT_HTT,
    FEAT_SSE3, FEAT_PCLMULQDQ, FEAT_MONITOR, FEAT_SSSE3, FEAT_FMA, FEAT_CX16, FEAT_PCID,
    FEAT_SSE4_1, FEAT_SSE4_2, FEAT_X2APIC, FEAT_MOVBE, FEAT_POPCNT, FEAT_TSC_DEADLINE,
    FEAT_AES, FEAT_XSAVE, FEAT_AVX, FEAT_F16C, FEAT_RDRAND, FEAT_HYPERVISOR,
    FEAT_SMEP, FEAT_ERMS, FEAT_INVPCID, FEAT_AVX2, FEAT_SMAP,
    FEAT_SYSCALL, FEAT_NX, FEAT_PDPE1GB, FEAT_RDTSCP, FEAT_LM,
    FEAT_TOPOEXT,
    FEAT_INVTSC,
    FEAT_COUNT
};

enum cache_type { CACHE_DATA = 1, CACHE_INSTRUCTION = 2, CACHE_UNIFIED = 3, CACHE_TRACE = 4 };

struct cache_desc {
    uint32_t level, type, size, ways, line; /* ways 0 = fully associative */
};

#define CPU_MAX_CACHES 8

struct cpu_info {
    bool has_cpuid;
    char vendor[13];
    uint32_t family, model, stepping;
    uint32_t max_leaf, max_ext_leaf;
    char brand[49];
    uint32_t feature_words[6];
    struct cache_desc caches[CPU_MAX_CACHES];
    uint32_t ncaches;
    const char *cache_source; /* "leaf4", "amd", "leaf2", "none" */
    const char *cache_leaf;   /* the CPUID leaf they came from: "4", "0x8000001d", "0x80000006", "0x80000005", "2", "none" */
    char hypervisor[13];      /* "" when none */
};

void cpu_identify(void);
/* Whether the CPUID instruction exists (EFLAGS.ID toggles), before cpu_identify. */
bool cpu_detect_cpuid(void);
/* A feature asked of CPUID itself, for code that runs before cpu_identify
 * (the console); false without CPUID. */
bool cpu_probe(enum cpu_feature f);
/* Physical address bits (CPUID 0x80000008), else the 36 of PAE-era CPUs;
 * raw CPUID, like cpu_probe. */
uint32_t cpu_phys_bits(void);
const struct cpu_info *cpu_info(void);
bool cpu_has(enum cpu_feature f);
const char *cpu_feature_name(enum cpu_feature f);
const char *cpu_cache_type_name(uint32_t type);
/* How many low bits of an APIC id number the hardware threads of one core
 * (0: one thread a core), so that APIC id >> bits names the core; *how
 * says which CPUID leaf told ("cpuid_0b", "cpuid_8000001e", "cpuid_01_04",
 * "no_htt"), or is 0 with a return of 0 when none did. After cpu_identify. */
uint32_t cpu_smt_bits(const char **how);

#endif
