/* The hosted build: the benchmarks and the fiber runtime as a 32-bit Linux
 * program, on a real machine's caches. These files implement, for a Linux
 * process, the kernel interfaces the shared code calls (console, memory,
 * paging, faults, exit, the TSC's time base); what cannot exist in a
 * process (paging on and off, the self-tests) is reported as skipped. */
#ifndef HOSTED_PLATFORM_H
#define HOSTED_PLATFORM_H

#include <stdint.h>

/* Address-space randomisation moves stacks, the heap and the buffers from
 * one process to the next, and cache-set and TLB conflicts with them: a
 * cost then flips between runs. Re-executes the program once with
 * randomisation off (personality ADDR_NO_RANDOMIZE), so layouts repeat.
 * Returns "off", or why it is still on (for the hello record). */
const char *hosted_fixed_layout(char **argv);
/* argv joined as the command line (argv[0] plays the loader's path); the
 * modules (the user's code) from the files this variable names, separated
 * by ':' (the host tool sets it: machines/emulators.py's HOSTED_MODULES_ENV). */
#define HOSTED_MODULES_ENV "CLEANROOM_MODULES"
void hosted_boot_info(int argc, char **argv, const char *aslr);
/* SIGSEGV, SIGBUS, SIGILL, SIGFPE become fault records (on their own stack). */
void hosted_fault_init(void);
/* The benchmark arena: `bytes` of address space from mmap. False if refused. */
int hosted_memory_init(uint64_t bytes);

#endif
