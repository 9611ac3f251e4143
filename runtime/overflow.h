/* A fiber that runs off its stack on purpose: the guard-page self-test
 * catches it, provoke=fiber lets it be reported as an unexpected fault. */
#ifndef RUNTIME_OVERFLOW_H
#define RUNTIME_OVERFLOW_H

#include <stdint.h>

#define OVERFLOW_FIBER_NAME "overflow"

/* Recurses until the stack it runs on hits its guard page (never returns
 * in practice): provoke=stack runs it on the kernel's own stack. */
uint32_t overflow_recurse(volatile uint32_t depth);
/* Runs a fiber named "overflow" with a 4 KiB guarded stack that recurses
 * until it hits the guard page (paging must be on for the guard to exist). */
void fiber_overflow_run(void);
/* After a caught overflow: the stack back, the scheduler reset. */
void fiber_overflow_cleanup(void);

#endif
