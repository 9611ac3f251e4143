#include "arch/tsc.h"

#include "arch/cpu.h"
#include "arch/pit.h"

enum tsc_serialize tsc_mode = TSC_SER_NONE;
static struct tsc_info info = { 0, "none", TSC_SER_NONE, 0 };

const struct tsc_info *tsc_info(void) { return &info; }

const char *tsc_serialize_name(enum tsc_serialize s)
{
    switch (s) {
    case TSC_SER_CPUID: return "cpuid";
    case TSC_SER_LFENCE: return "lfence";
    case TSC_SER_RDTSCP: return "rdtscp";
    default: return "none";
    }
}

uint64_t tsc_empty_region(uint32_t samples)
{
    uint64_t best = ~(uint64_t)0;
    for (uint32_t i = 0; i < samples; i++) {
        uint64_t t0 = tsc_begin();
        uint64_t t1 = tsc_end();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

static void frequency(void)
{
    const struct cpu_info *c = cpu_info();
    if (c->max_leaf >= 0x15) {
        struct cpuid_regs r = cpuid(0x15, 0);
        if (r.eax && r.ebx && r.ecx) { /* crystal Hz * TSC/crystal ratio */
            info.hz = (uint64_t)r.ecx * r.ebx / r.eax;
            info.method = "cpuid15";
            return;
        }
    }
    if (c->max_leaf >= 0x16) {
        uint32_t mhz = cpuid(0x16, 0).eax & 0xffff;
        if (mhz) {
            info.hz = (uint64_t)mhz * 1000000;
            info.method = "cpuid16";
            return;
        }
    }
    /* Best of three 50 ms PIT windows: a slow first pass (cold caches, an
     * emulator translating code) only ever makes a window longer. */
    uint64_t best = ~(uint64_t)0, ticks;
    for (int i = 0; i < 3; i++)
        if (pit_tsc_ticks(50, &ticks) && ticks < best)
            best = ticks;
    if (best != ~(uint64_t)0) {
        info.hz = best * 20;
        info.method = pit_method();
    }
}

bool tsc_init(void)
{
    if (!cpu_has(FEAT_TSC))
        return false;
    if (cpu_has(FEAT_RDTSCP) && cpu_has(FEAT_SSE2))
        tsc_mode = TSC_SER_RDTSCP;
    else if (cpu_has(FEAT_SSE2))
        tsc_mode = TSC_SER_LFENCE;
    else if (cpu_info()->has_cpuid)
        tsc_mode = TSC_SER_CPUID;
    info.serialize = tsc_mode;
    frequency();
    tsc_empty_region(16); /* warm up */
    info.overhead = tsc_empty_region(1000);
    return true;
}
