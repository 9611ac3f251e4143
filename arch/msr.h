/* Reading an MSR that may not exist. The CPU answers rdmsr of an
 * unimplemented MSR with #GP; emulators differ (QEMU TCG reads 0 for many,
 * Bochs raises #GP), so every optional MSR is read through here once, at
 * boot, and only trusted MSRs are read directly afterwards. */
#ifndef ARCH_MSR_H
#define ARCH_MSR_H

#include <stdbool.h>
#include <stdint.h>

#define MSR_SMI_COUNT 0x34
#define MSR_MTRRCAP 0xfe
#define MSR_MCG_CAP 0x179
#define MSR_MCG_STATUS 0x17a
#define MSR_MTRR_PHYSBASE0 0x200 /* base n at 0x200 + 2n, mask at 0x201 + 2n */
#define MSR_MTRR_FIX64K_00000 0x250
#define MSR_MTRR_FIX16K_80000 0x258
#define MSR_MTRR_FIX16K_A0000 0x259
#define MSR_MTRR_FIX4K_C0000 0x268 /* eight of them, to 0x26f */
#define MSR_PAT 0x277
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MSR_MC0_STATUS 0x401 /* bank i at 0x401 + 4i */
#define MSR_MC0_ADDR 0x402   /* bank i at 0x402 + 4i */
#define MSR_MISC_ENABLE 0x1a0
#define MSR_MPERF 0xe7
#define MSR_APERF 0xe8

/* False (and *v untouched) when rdmsr raised #GP. Needs CPUID's MSR bit
 * (the caller checks) and the fault handlers (kernel/fault.h). */
bool msr_try_read(uint32_t msr, uint64_t *v);
/* False when wrmsr raised #GP (a reserved bit, or no such MSR). */
bool msr_try_write(uint32_t msr, uint64_t v);

#endif
