/* The `evidence` record, once per boot after `counters`: what the harness
 * can tell about each case besides its TSC ticks, and what it cannot
 * (arch/perfstate.h: APERF/MPERF, the SMI count; arch/mcheck.h: CR4.MCE;
 * arch/mtrr.h: memory types; arch/paging.h: 4 MiB pages split). What is
 * absent is said here once, with why, instead of in every result. */
#ifndef KERNEL_EVIDENCE_RECORD_H
#define KERNEL_EVIDENCE_RECORD_H

void evidence_record(void);

#endif
