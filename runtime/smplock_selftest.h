/* Self-tests of the cross-CPU locks (runtime/smplock.h), listed in
 * app/selftests.c; they run only when the run has more than one CPU. */
#ifndef RUNTIME_SMPLOCK_SELFTEST_H
#define RUNTIME_SMPLOCK_SELFTEST_H

#include <stdbool.h>

/* Every CPU increments one plain counter under each lock: none lost. */
bool smplock_test_no_lost_increment(char *detail);
/* A producer on CPU 0 and a consumer on CPU 1 hand items over through a
 * spinblock and two smpconds: each arrives once, in order. */
bool smplock_test_condvar_handoff(char *detail);
/* Writers on every CPU keep two words equal; readers never see them differ. */
bool smplock_test_rw_exclusion(char *detail);

#endif
