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

/* In the #MC handler: what the machine-check registers say. */
void mcheck_summary(struct mcheck_summary *s);
/* provoke=mc: `int 18` enters the #MC handler as a machine check would
 * (MCG_STATUS.MCIP stays clear: no bank reports an error). The hosted
 * build cannot: it does nothing there. */
void mcheck_provoke(void);

#endif
