/* Which of the run's CPUs are hardware threads of one core (SMT siblings),
 * from smp_summary()'s core ids: the kernel's from CPUID topology, the
 * hosted build's from /sys. Benchmarks record it with every k sweep and
 * every pair. */
#ifndef KERNEL_SMP_CORES_H
#define KERNEL_SMP_CORES_H

#include <stdbool.h>
#include <stdint.h>

/* Whether CPUs a and b (indices into smp_summary()->used_ids) share a core;
 * false where the cores are not known. */
bool smp_siblings(uint32_t a, uint32_t b);
/* Whether any two of CPUs 0 .. k-1 share a core. */
bool smp_any_siblings(uint32_t k);

#endif
