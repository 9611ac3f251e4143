/* CPU exceptions at the kernel level.
 *
 * Unexpected: a `fault` record (vector, name, eip, err, cr2, the benchmark
 * running) and the run ends with status `fault`. Never a triple fault: a
 * double fault (say, a stack overflow into a guard page, where the CPU
 * cannot even push the page fault's frame) switches to a task with a stack
 * of its own and is reported like any other. Expecting EXC_DF catches it.
 *
 * Expected: fault_expect() runs a function that provokes an exception on
 * purpose (self-tests, later page-fault benchmarks); if one of the given
 * vectors is raised, the function is abandoned and fault_expect returns
 * true with what happened. */
#ifndef KERNEL_FAULT_H
#define KERNEL_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/fault_record.h"

#define FAULT_VEC(v) (1u << (v))

struct fault_info {
    uint32_t vector, eip, err, cr2;
};

void fault_init(void);
bool fault_expect(uint32_t vector_mask, void (*fn)(void *), void *arg, struct fault_info *info);


#endif
