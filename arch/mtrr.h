/* The memory types the firmware left: IA32_MTRRCAP, IA32_MTRR_DEF_TYPE,
 * the fixed and variable ranges, and IA32_PAT, read once at boot (before
 * paging_init, which keeps 4 MiB pages within one type). The lookup itself
 * is arch/memtype.c. The hosted build answers "unknown": a Linux process
 * cannot read MSRs. */
#ifndef ARCH_MTRR_H
#define ARCH_MTRR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/memtype.h"
#include "lib/regions.h"

/* free: the memory the benchmarks are handed (kernel/memory.c's regions,
 * kept; their types are checked as they are used). */
void mtrr_init(const struct region_set *free);
const struct mtrr_set *mtrr_set(void);
/* "on", "off" (MTRRs present but disabled: all memory uncached), "absent"
 * (CPUID has no MTRR), "unreadable" (rdmsr raised #GP), "hosted". */
const char *mtrr_state(void);
uint32_t mtrr_var_count(void); /* MTRRCAP.VCNT */
/* IA32_PAT (false when the CPU has none or it cannot be read). */
bool mtrr_pat(uint64_t *pat);
/* The effective type of [base, end) for a benchmark: the MTRRs' type,
 * combined with PAT entry 0 (the one the identity maps select) where a PAT
 * exists; MEMTYPE_MIXED with *first_other set where it is not one type. */
enum memtype mtrr_range_type(uint64_t base, uint64_t end, uint64_t *first_other);
/* The type of every byte benchmarks use at this moment: the kernel image
 * (code, boot stack, static data) and what the allocator has handed out.
 * Not write-back (or mixed): bad_base and bad_end name the first range that
 * is not, and bad_type its own type. */
enum memtype mtrr_used_memory_type(uint64_t *bad_base, uint64_t *bad_end, enum memtype *bad_type);
/* The same over every byte benchmarks could be given: the kernel image
 * and all free regions (the `evidence` record's summary). */
enum memtype mtrr_free_memory_type(void);
/* provoke=uc: programs a free variable MTRR to make the 64 KiB block
 * where the next allocation lands uncacheable (the SDM's procedure: caches
 * off and flushed, MTRRs off, write, on again), then reads the MTRRs again,
 * so the benchmarks that follow meet memory that is not write-back. NULL
 * when done, else why not (no MTRRs, no free variable range). */
const char *mtrr_provoke_uncached(void);

#endif
