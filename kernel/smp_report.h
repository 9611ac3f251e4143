/* What the kernel's CPUs (kernel/smp.c) and the hosted build's threads
 * (hosted/smp.c) report alike: a CPU that stopped answering, and which of
 * the run's CPUs are hardware threads of one core. */
#ifndef KERNEL_SMP_REPORT_H
#define KERNEL_SMP_REPORT_H

#include <stdbool.h>
#include <stdint.h>

/* CPU cpu (platform id `id`: APIC id, or the OS's CPU number) did not finish
 * its work within `seconds`: a `cpu_silent` error naming it and what was
 * running, then the end of the run (status fail). */
__attribute__((noreturn)) void smp_report_silent(uint32_t cpu, uint32_t id, uint32_t seconds);

/* Whether CPUs a and b (indices into smp_summary()->used_ids) share a core;
 * false where the cores are not known. */
bool smp_siblings(uint32_t a, uint32_t b);
/* Whether any two of CPUs 0 .. k-1 share a core. */
bool smp_any_siblings(uint32_t k);

/* A CPU count bigger than the arrays that hold ids: store the id only while
 * there is room, count it always (smp_summary's found/failed). */
void smp_note_id(uint32_t *ids, uint32_t *count, uint32_t id);

#endif
