/* kernel/park.h for a process: the futex, as NPTL's and LiteThreads'
 * mutexes block. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/park.h"

void park_wait(volatile uint32_t *word, uint32_t old)
{
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == old)
        syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
}

void park_wake(volatile uint32_t *word) { syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

void park_wake_all(volatile uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

const char *park_kind(void) { return "futex"; }
