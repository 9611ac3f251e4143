#include "arch/cpuidlimit.h"

#include "arch/cpu.h"
#include "arch/msr.h"
#include "arch/x86.h"
#include "lib/string.h"

#define MISC_ENABLE_LIMIT_CPUID (1ull << 22)
#define CPUID1_EDX_MSR (1u << 5)

static const char *state = "n/a";

const char *cpuidlimit_state(void) { return state; }

/* Before cpu_identify: the vendor and the MSR bit straight from CPUID. */
static bool intel_with_msrs(void)
{
    struct cpuid_regs v = cpuid(0, 0);
    char vendor[13];
    memcpy(vendor, &v.ebx, 4);
    memcpy(vendor + 4, &v.edx, 4);
    memcpy(vendor + 8, &v.ecx, 4);
    vendor[12] = 0;
    return strcmp(vendor, "GenuineIntel") == 0 && v.eax >= 1 && (cpuid(1, 0).edx & CPUID1_EDX_MSR);
}

void cpuidlimit_lift(bool set_first)
{
    uint64_t misc;
    if (!cpu_detect_cpuid() || !intel_with_msrs())
        return;
    if (!msr_try_read(MSR_MISC_ENABLE, &misc)) {
        state = "unreadable";
        return;
    }
    if (set_first && msr_try_write(MSR_MISC_ENABLE, misc | MISC_ENABLE_LIMIT_CPUID))
        msr_try_read(MSR_MISC_ENABLE, &misc);
    if (!(misc & MISC_ENABLE_LIMIT_CPUID)) {
        state = "clear";
        return;
    }
    uint64_t after = misc;
    bool written = msr_try_write(MSR_MISC_ENABLE, misc & ~MISC_ENABLE_LIMIT_CPUID);
    if (written && msr_try_read(MSR_MISC_ENABLE, &after) && !(after & MISC_ENABLE_LIMIT_CPUID))
        state = "cleared";
    else
        state = "stuck";
}
