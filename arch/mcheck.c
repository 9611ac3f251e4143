#include "arch/mcheck.h"

#include "arch/cpu.h"
#include "arch/mmu.h"
#include "arch/msr.h"
#include "arch/x86.h"

#define MCG_CAP_COUNT 0xffu
#define MCI_STATUS_VAL (1ull << 63)
#define BANKS_READ_MAX 32u /* enough for every CPU so far; bounds the handler's loop */

static const char *why = "not initialised";
static uint32_t banks;
static bool mca_readable;

/* Read back from CR4: what the CPU holds, not what was asked of it. */
bool mcheck_enabled(void) { return why == 0 && (read_cr4() & CR4_MCE); }
const char *mcheck_why(void) { return why; }
uint32_t mcheck_banks(void) { return banks; }

void mcheck_init(void)
{
    if (!cpu_has(FEAT_MCE)) {
        why = "CPUID has no MCE: a machine check cannot raise #MC on this CPU";
        return;
    }
    uint64_t cap, status;
    /* read once here, safely, so the #MC handler may read them directly */
    if (cpu_has(FEAT_MCA) && cpu_has(FEAT_MSR) && msr_try_read(MSR_MCG_CAP, &cap) &&
        msr_try_read(MSR_MCG_STATUS, &status)) {
        banks = (uint32_t)cap & MCG_CAP_COUNT;
        mca_readable = true;
    }
    write_cr4(read_cr4() | CR4_MCE);
    why = 0;
}

void mcheck_summary(struct mcheck_summary *s)
{
    *s = (struct mcheck_summary){ false, 0, -1, 0 };
    if (!mca_readable)
        return;
    s->read = true;
    s->mcg_status = rdmsr(MSR_MCG_STATUS);
    uint32_t n = banks < BANKS_READ_MAX ? banks : BANKS_READ_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t st = rdmsr(MSR_MC0_STATUS + 4 * i);
        if (st & MCI_STATUS_VAL) {
            s->bank = (int32_t)i;
            s->bank_status = st;
            return;
        }
    }
}

void mcheck_provoke(void) { int18(); }
