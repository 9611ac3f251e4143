/* The records that describe the machine before anything is measured:
 * hello, cpu, tsc, mem, config (in that order; see docs/PROTOCOL.md). */
#ifndef KERNEL_SYSINFO_H
#define KERNEL_SYSINFO_H

#include "kernel/config.h"

void sysinfo_hello(void);
void sysinfo_cpu(void);
void sysinfo_tsc(void);
void sysinfo_mem(void);
void sysinfo_config(const struct config *cfg);

#endif
