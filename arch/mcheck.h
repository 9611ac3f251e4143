/* Machine checks: with CR4.MCE clear a machine check shuts the processor
 * down (a PC resets without a word); with it set the CPU raises #MC
 * (vector 18), which the fault path reports like any other exception, with
 * IA32_MCG_STATUS and the first bank that holds an error. */
#ifndef ARCH_MCHECK_H
#define ARCH_MCHECK_H

#include <stdbool.h>
#include <stdint.h>

/* Sets CR4.MCE where CPUID says MCE exists; reads MCG_CAP where MCA does. */
void mcheck_init(void);
bool mcheck_enabled(void);
/* Why CR4.MCE is not set (NULL when it is). */
const char *mcheck_why(void);
/* Error-reporting banks (IA32_MCG_CAP bits 7:0; 0 without MCA). */
uint32_t mcheck_banks(void);

struct mcheck_summary {
    bool read;            /* MCA exists: the fields below mean something */
    uint64_t mcg_status;  /* RIPV, EIPV, MCIP */
    int32_t bank;         /* the first bank whose status is valid, -1: none */
    uint64_t bank_status; /* its IA32_MCi_STATUS */
};

/* Banks the firmware left valid from before this boot (a corrected error
 * logged before the reset, a stale uncorrected one): Linux logs and clears
 * them at boot too. mcheck_init records each (first MCHECK_STALE_MAX) and
 * clears its status, so a #MC during the run names only its own bank. */
#define MCHECK_STALE_MAX 8
struct mcheck_stale {
    uint32_t bank;
    uint64_t status;   /* IA32_MCi_STATUS as found */
    uint64_t addr;     /* IA32_MCi_ADDR where status has ADDRV, else 0 */
    bool cleared;      /* writing 0 to the status took (no #GP) */
};
/* How many banks were valid at boot (may exceed MCHECK_STALE_MAX); the
 * first ones through *list. */
uint32_t mcheck_stale(const struct mcheck_stale **list);

/* In the #MC handler: what the machine-check registers say. */
void mcheck_summary(struct mcheck_summary *s);
/* The status bits that matter here (SDM Vol. 3B, IA32_MCi_STATUS). */
#define MCI_STATUS_VAL (1ull << 63)
#define MCI_STATUS_UC (1ull << 61)
#define MCI_STATUS_ADDRV (1ull << 58)
/* provoke=mc: `int 18` enters the #MC handler as a machine check would
 * (MCG_STATUS.MCIP stays clear: no bank reports an error). The hosted
 * build cannot: it does nothing there. */
void mcheck_provoke(void);

#endif
