/* The ring-3 programs of the thread self-tests (runtime/uthread_selftest.c
 * runs them and reads what they saw from their globals). */
#ifndef RUNTIME_UTEST_USER_H
#define RUNTIME_UTEST_USER_H

#include <stdint.h>

#include "runtime/uabi.h"

#define UTEST_ALLOCS 24
#define UTEST_COUNTER_REPS 20

/* Synchronisation objects, in the sync page (never isolated). */
struct usync_area {
    struct umutex m;
    struct ucond c;
    struct ubarrier b;
};
#define USYNC ((struct usync_area *)U_SYNC_AREA)

/* A writer of the commit tests: page[word] = value, yield, look at page[peek], barrier. */
struct utest_writer {
    uint32_t word, value, peek;
    volatile uint32_t seen;
};

struct utest_globals {
    volatile uint32_t result[8];
    volatile uint32_t x, ready, counter, sysenter_ok;
    volatile uint32_t *obj;
    volatile uint32_t stack_addr;
    uint32_t ro_page;                /* a read-only page the kernel mapped for the fault test */
    struct utest_writer writer[2];
    uint32_t ptr[2][UTEST_ALLOCS], size[2][UTEST_ALLOCS];
    volatile uint32_t page[1024] __attribute__((aligned(4096))); /* a page of its own: the commit tests */
};
#define UTEST ((struct utest_globals *)U_GLOBALS)
_Static_assert(sizeof(struct utest_globals) <= U_GLOBALS_PAGES * U_PAGE, "the test globals fit");

void utest_syscalls(void *arg);
void utest_share_writer(void *arg);
void utest_stack_parent(void *arg);
void utest_fault_kernel_write(void *arg);
void utest_fault_kernel_read(void *arg);
void utest_fault_readonly(void *arg);
void utest_fault_privileged(void *arg);
void utest_survivor(void *arg);
void utest_commit_writer(void *arg); /* arg: a struct utest_writer in the globals */
void utest_heap_owner(void *arg);
void utest_heap_other(void *arg);
void utest_lifecycle(void *arg);
void utest_counter(void *arg);       /* arg: 0 the consumer of the condvar handshake, 1 the producer */
void utest_map_demand(void *arg);    /* arg: the demand region's first page */

#endif
