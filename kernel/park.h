/* Blocking one CPU until a word changes: the "block" of the cross-CPU
 * spin-then-block mutex (runtime/smplock.h).
 *
 * In the kernel every CPU runs one worker with IF=0 and there is nothing
 * else to run, so blocking is parking: the CPU polls its own word (a cache
 * line no other waiter touches) with pause until another CPU changes it;
 * a wake-up is the store itself, one cache-line transfer. The hosted build
 * blocks for real: FUTEX_WAIT on the word (the thread sleeps, the CPU may
 * run something else, and a wake-up is a system call, an IPI and the
 * scheduler), which is what LiteThreads' and NPTL's mutexes do. */
#ifndef KERNEL_PARK_H
#define KERNEL_PARK_H

#include <stdint.h>

/* Returns once *word != old. */
void park_wait(volatile uint32_t *word, uint32_t old);
/* After the caller changed *word: wakes a CPU parked on it (one, when
 * several are: a lock's waiter, each on a word of its own). */
void park_wake(volatile uint32_t *word);
/* After the caller changed *word: wakes every CPU parked on it. */
void park_wake_all(volatile uint32_t *word);
/* "poll" or "futex": what blocking is here (result params). */
const char *park_kind(void);

#endif
