/* A fiber that runs off its stack on purpose: the guard-page self-test
 * catches it, provoke=fiber lets it be reported as an unexpected fault. */
#ifndef RUNTIME_OVERFLOW_H
#define RUNTIME_OVERFLOW_H

#define OVERFLOW_FIBER_NAME "overflow"

/* Runs a fiber named "overflow" with a 4 KiB guarded stack that recurses
 * until it hits the guard page (paging must be on for the guard to exist). */
void fiber_overflow_run(void);
/* After a caught overflow: the stack back, the scheduler reset. */
void fiber_overflow_cleanup(void);

#endif
