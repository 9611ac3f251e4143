/* The hosted build's turn at each busy wait (arch/x86.h's CPU_WAIT_TURN).
 * The Makefile puts this header ahead of every file of the hosted build
 * (-include), so it includes no system header: one here would come before
 * a file's own _GNU_SOURCE and hide what that asks for. */
#ifndef HOSTED_SMP_H
#define HOSTED_SMP_H

/* Set when workers outnumber the CPUs they share (oversubscribe=1): then a
 * waiting worker's turn gives its CPU to the threads sharing it, one of which
 * it is waiting for; without that every wait lasts a time slice. */
extern volatile unsigned int hosted_wait_yields;
void hosted_wait_yield(void);

#define CPU_WAIT_TURN()                                      \
    do {                                                     \
        if (__builtin_expect(hosted_wait_yields != 0, 0))    \
            hosted_wait_yield();                             \
    } while (0)

#endif
