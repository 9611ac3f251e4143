#include "arch/mcheck.h"

#include "arch/cpu.h"
#include "arch/mmu.h"
#include "arch/msr.h"
#include "arch/x86.h"

#define MCG_CAP_COUNT 0xffu
#define BANKS_READ_MAX 32u /* enough for every CPU so far; bounds the handler's loop */

static const char *why = "not initialised";
static uint32_t banks;
static bool mca_readable;
static struct mcheck_stale stale[MCHECK_STALE_MAX];
static uint32_t n_stale;

uint32_t mcheck_stale(const struct mcheck_stale **list)
{
    *list = stale;
    return n_stale;
}

/* Every bank valid before the run: noted, then cleared (through the safe
 * accessors: some CPUs raise #GP on banks they do not implement). */
static void clear_stale_banks(void)
{
    uint32_t n = banks < BANKS_READ_MAX ? banks : BANKS_READ_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t st, addr = 0;
        if (!msr_try_read(MSR_MC0_STATUS + 4 * i, &st) || !(st & MCI_STATUS_VAL))
            continue;
        if ((st & MCI_STATUS_ADDRV) && !msr_try_read(MSR_MC0_ADDR + 4 * i, &addr))
            addr = 0;
        bool cleared = msr_try_write(MSR_MC0_STATUS + 4 * i, 0);
        if (n_stale < MCHECK_STALE_MAX)
            stale[n_stale] = (struct mcheck_stale){ i, st, addr, cleared };
        n_stale++;
    }
}

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
        clear_stale_banks();
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
