/* What the kernel's CPUs (kernel/smp.c) and the hosted build's threads
 * (hosted/smp.c) report alike: a CPU that stopped answering, and the ids of
 * CPUs found or failed. Below kernel/smp.h: it takes what it needs as
 * arguments (which of the run's CPUs share a core: kernel/smp_cores.h). */
#ifndef KERNEL_SMP_REPORT_H
#define KERNEL_SMP_REPORT_H

#include <stdint.h>

/* CPU cpu (platform id `id`, of the kind `id_kind`: "APIC id", or "OS CPU"
 * hosted) did not finish its work within `seconds`: a `cpu_silent` error
 * naming it and what was running, then the end of the run (status fail). */
__attribute__((noreturn)) void smp_report_silent(uint32_t cpu, const char *id_kind, uint32_t id, uint32_t seconds);

/* A CPU count bigger than the arrays that hold ids: store the id only while
 * there is room, count it always (smp_summary's found/failed). */
void smp_note_id(uint32_t *ids, uint32_t *count, uint32_t id);

#endif
