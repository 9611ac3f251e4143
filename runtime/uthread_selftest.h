/* Self-tests of the ring-3 threads (isolated address spaces, commit mode,
 * IAmalloc), listed in app/selftests.c. Each boots a world of its own
 * with paging on. */
#ifndef RUNTIME_UTHREAD_SELFTEST_H
#define RUNTIME_UTHREAD_SELFTEST_H

#include <stdbool.h>

bool uthread_test_syscalls(char *detail);
bool uthread_test_share(char *detail);
bool uthread_test_stack_private(char *detail);
bool uthread_test_faults(char *detail);
bool uthread_test_commit_merge(char *detail);
bool uthread_test_commit_order(char *detail);
bool uthread_test_heap(char *detail);
bool uthread_test_lifecycle(char *detail);
bool uthread_test_sync(char *detail);
bool uthread_test_map_demand(char *detail);

#endif
