/* Evidence that a TSC tick was what the run took it for, read around each
 * recorded case (bench/harness.c), never inside a timed region:
 *
 * - IA32_APERF / IA32_MPERF (CPUID 6 ECX bit 0): MPERF counts at the TSC's
 *   fixed rate, APERF at the core's actual clock, both only while the core
 *   runs. Their ratio over a case is the core clock over the TSC clock:
 *   1 when it ran at the nominal frequency, above 1 with turbo, below with
 *   a lower P-state or thermal throttling.
 * - MSR_SMI_COUNT (0x34, Intel family 6 from Nehalem on): system
 *   management interrupts, which stop the CPU behind the kernel's back
 *   even with interrupts off. A case with a non-zero delta was touched.
 *
 * Each is probed once at boot through arch/msr.h (an emulator may raise
 * #GP, or read 0 without counting); what is absent is said once, in the
 * `evidence` record, with why. The hosted build has neither (no MSR access
 * from user space). */
#ifndef ARCH_PERFSTATE_H
#define ARCH_PERFSTATE_H

#include <stdbool.h>
#include <stdint.h>

struct perfstate {
    uint64_t aperf, mperf, smi;
};

void perfstate_init(void);
bool perfstate_has_aperf_mperf(void);
bool perfstate_has_smi(void);
/* Why absent (NULL when present). */
const char *perfstate_aperf_mperf_why(void);
const char *perfstate_smi_why(void);
/* A snapshot of what is present (absent fields read 0). */
void perfstate_read(struct perfstate *p);

#endif
