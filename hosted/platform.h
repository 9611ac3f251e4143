/* The hosted build: the benchmarks and the fiber runtime as a 32-bit Linux
 * program, on a real machine's caches. These files implement, for a Linux
 * process, the kernel interfaces the shared code calls (console, memory,
 * paging, faults, exit, the TSC's time base); what cannot exist in a
 * process (paging on and off, the self-tests) is reported as skipped. */
#ifndef HOSTED_PLATFORM_H
#define HOSTED_PLATFORM_H

#include <stdint.h>

/* argv joined as the command line (argv[0] plays the loader's path). */
void hosted_boot_info(int argc, char **argv);
/* SIGSEGV, SIGBUS, SIGILL, SIGFPE become fault records (on their own stack). */
void hosted_fault_init(void);
/* The benchmark arena: `bytes` of address space from mmap. False if refused. */
int hosted_memory_init(uint64_t bytes);

#endif
