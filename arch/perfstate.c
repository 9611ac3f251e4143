#include "arch/perfstate.h"

#include "arch/cpu.h"
#include "arch/msr.h"
#include "arch/x86.h"
#include "lib/string.h"

#define CPUID6_ECX_APERFMPERF 1u
#define SMI_FIRST_MODEL 0x1a /* Nehalem: the first family 6 model with MSR_SMI_COUNT */
#define PROBE_SPINS 20000u   /* between two reads: enough for any clock to tick */

static const char *aperf_why = "not probed";
static const char *smi_why = "not probed";

bool perfstate_has_aperf_mperf(void) { return aperf_why == 0; }
bool perfstate_has_smi(void) { return smi_why == 0; }
const char *perfstate_aperf_mperf_why(void) { return aperf_why; }
const char *perfstate_smi_why(void) { return smi_why; }

/* Present in CPUID, readable, and both counting (QEMU TCG reads such MSRs
 * as 0 and never advances them). */
static const char *probe_aperf_mperf(void)
{
    const struct cpu_info *c = cpu_info();
    if (!c->has_cpuid || c->max_leaf < 6)
        return "no CPUID leaf 6";
    if (!(cpuid(6, 0).ecx & CPUID6_ECX_APERFMPERF))
        return "CPUID 6 ECX bit 0 (APERF/MPERF) is clear";
    if (!cpu_has(FEAT_MSR))
        return "no rdmsr (CPUID MSR bit clear)";
    uint64_t a0, m0, a1, m1;
    if (!msr_try_read(MSR_APERF, &a0) || !msr_try_read(MSR_MPERF, &m0))
        return "rdmsr of IA32_APERF/IA32_MPERF raised #GP";
    spin_turns(PROBE_SPINS);
    if (!msr_try_read(MSR_APERF, &a1) || !msr_try_read(MSR_MPERF, &m1))
        return "rdmsr of IA32_APERF/IA32_MPERF raised #GP";
    if (a1 == a0 || m1 == m0)
        return "IA32_APERF/IA32_MPERF do not count (the same value twice)";
    return 0;
}

static const char *probe_smi(void)
{
    const struct cpu_info *c = cpu_info();
    if (!str_eq(c->vendor, "GenuineIntel"))
        return "MSR_SMI_COUNT (0x34) is Intel's only";
    if (c->family != 6 || c->model < SMI_FIRST_MODEL)
        return "this Intel CPU predates MSR_SMI_COUNT (family 6 from Nehalem, model 0x1a, on)";
    if (!cpu_has(FEAT_MSR))
        return "no rdmsr (CPUID MSR bit clear)";
    uint64_t v;
    if (!msr_try_read(MSR_SMI_COUNT, &v))
        return "rdmsr of MSR_SMI_COUNT raised #GP";
    return 0;
}

void perfstate_init(void)
{
    aperf_why = probe_aperf_mperf();
    smi_why = probe_smi();
}

void perfstate_read(struct perfstate *p)
{
    *p = (struct perfstate){ 0, 0, 0 };
    if (!aperf_why) {
        p->mperf = rdmsr(MSR_MPERF);
        p->aperf = rdmsr(MSR_APERF);
    }
    if (!smi_why)
        p->smi = rdmsr(MSR_SMI_COUNT);
}
