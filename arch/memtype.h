/* Memory types (Intel SDM vol. 3, "Memory Cache Control"): what the MTRRs
 * and the PAT make of a physical range. Portable and pure: the MTRR values
 * come in a struct (arch/mtrr.c reads them from the MSRs; tests/unit builds
 * them by hand), so the lookup is tested on the host.
 *
 * A benchmark buffer that is not write-back measures the memory bus, not
 * the caches: the harness refuses it (bench/harness.h). A 4 MiB page that
 * spans two memory types is undefined behaviour for the CPU: arch/paging.c
 * maps such a page with 4 KiB pages instead. */
#ifndef ARCH_MEMTYPE_H
#define ARCH_MEMTYPE_H

#include <stdbool.h>
#include <stdint.h>

/* The hardware encodings (MTRR and PAT fields), then what a lookup may
 * answer besides them. */
enum memtype {
    MEMTYPE_UC = 0,
    MEMTYPE_WC = 1,
    MEMTYPE_WT = 4,
    MEMTYPE_WP = 5,
    MEMTYPE_WB = 6,
    MEMTYPE_UC_MINUS = 7, /* PAT only */
    MEMTYPE_MIXED = 0x100, /* a range of more than one type */
    MEMTYPE_UNKNOWN = 0x101, /* no MTRRs to ask (old CPU, some emulators, a Linux process) */
};

#define MTRR_VAR_MAX 16    /* variable ranges kept (VCNT is 8 or 10 on real CPUs) */
#define MTRR_FIXED_COUNT 88 /* 8 x 64 KiB + 16 x 16 KiB + 64 x 4 KiB below 1 MiB */
#define MTRR_FIXED_END 0x100000u

struct mtrr_var {
    uint64_t base, mask; /* physical, bits 12 and up; mask already cut to the address width */
    uint8_t type;
    bool valid;
};

struct mtrr_set {
    bool present;       /* the CPU has MTRRs and they were read */
    bool enabled;       /* IA32_MTRR_DEF_TYPE.E: off means all memory is UC */
    bool fixed_enabled; /* MTRRCAP.FIX and DEF_TYPE.FE */
    uint8_t def_type;
    uint8_t fixed[MTRR_FIXED_COUNT];
    uint32_t nvar;
    struct mtrr_var var[MTRR_VAR_MAX];
};

/* "wb", "uc", "wc", "wt", "wp", "uc-", "mixed", "unknown" (what records say). */
const char *memtype_name(enum memtype t);
/* The type of the byte at addr, by the MTRRs alone (paging off). */
enum memtype memtype_at(const struct mtrr_set *s, uint64_t addr);
/* The type of [base, end) by the MTRRs: one type, MEMTYPE_MIXED (with
 * *first_other, if given, the first address whose type differs from
 * base's) or MEMTYPE_UNKNOWN. */
enum memtype memtype_range(const struct mtrr_set *s, uint64_t base, uint64_t end, uint64_t *first_other);
/* The effective type of a page whose PAT entry holds pat_type over memory
 * of MTRR type mtrr_type (SDM table "Effective Page-Level Memory Types";
 * the combinations it calls implementation-defined answer UC). */
enum memtype memtype_with_pat(enum memtype mtrr_type, uint8_t pat_type);
/* Which 4 MiB identity pages [pde * 4 MiB, +4 MiB), from_pde <= pde and
 * pde * 4 MiB < top, span more than one type: split[pde] true for each;
 * returns how many. With no MTRRs nothing is split (nothing is known). */
uint32_t memtype_split_large_pages(const struct mtrr_set *s, uint32_t from_pde, uint64_t top, bool split[1024]);

#endif
