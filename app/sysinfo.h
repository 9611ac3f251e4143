/* The records that describe the machine before anything is measured:
 * hello, cpu, tsc, mem, config (in that order; see docs/PROTOCOL.md). */
#ifndef APP_SYSINFO_H
#define APP_SYSINFO_H

#include <stdint.h>

#include "lib/config.h"

void sysinfo_hello(void);
/* boot_cr0: CR0 as the loader left it (cache-disable bits show there). */
void sysinfo_cpu(uint32_t boot_cr0);
void sysinfo_tsc(void);
void sysinfo_mem(void);
void sysinfo_config(const struct config *cfg);
/* The `smp` record: the CPUs found, started and used (none when cpus=1). */
void sysinfo_smp(void);

#endif
