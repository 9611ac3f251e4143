/* Self-tests of the locks and synchronisation primitives, listed in
 * app/selftests.c. */
#ifndef RUNTIME_SYNC_SELFTEST_H
#define RUNTIME_SYNC_SELFTEST_H

#include <stdbool.h>

bool sync_test_mutual_exclusion(char *detail);
bool sync_test_fifo(char *detail);
bool sync_test_condvar(char *detail);
bool sync_test_barrier(char *detail);
bool sync_test_semaphore(char *detail);
bool sync_test_stack_pool(char *detail);

#endif
