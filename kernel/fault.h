/* CPU exceptions at the kernel level: one nobody expected (arch/trap.h
 * catches the expected ones) becomes a `fault` record (vector, name, eip,
 * err, cr2, what was running) and the run ends with status `fault`. */
#ifndef KERNEL_FAULT_H
#define KERNEL_FAULT_H

#include "kernel/fault_record.h"

void fault_init(void);

#endif
