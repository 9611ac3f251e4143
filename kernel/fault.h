/* CPU exceptions at the kernel level.
 *
 * Unexpected: a `fault` record (vector, name, eip, err, cr2, the benchmark
 * running) and the run ends with status `fault`. Never a triple fault.
 *
 * Expected: fault_expect() runs a function that provokes an exception on
 * purpose (self-tests, later page-fault benchmarks); if one of the given
 * vectors is raised, the function is abandoned and fault_expect returns
 * true with what happened. */
#ifndef KERNEL_FAULT_H
#define KERNEL_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#define FAULT_VEC(v) (1u << (v))

struct fault_info {
    uint32_t vector, eip, err, cr2;
};

void fault_init(void);
bool fault_expect(uint32_t vector_mask, void (*fn)(void *), void *arg, struct fault_info *info);
/* What is running, named in fault records (NULL: nothing). */
void fault_set_running(const char *bench, const char *what);

#endif
