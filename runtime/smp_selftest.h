/* Self-tests of the other CPUs (cpus=N), listed in app/selftests.c; they
 * run only when the run has more than one CPU. */
#ifndef RUNTIME_SMP_SELFTEST_H
#define RUNTIME_SMP_SELFTEST_H

#include <stdbool.h>

/* True when there is more than one CPU to test. */
bool smp_tests_apply(void);
/* fn(arg) on every CPU at once (the caller's too), back when all are done. */
void smp_run_everywhere(void (*fn)(void *), void *arg);
bool smp_test_every_cpu_answers(char *detail);
bool smp_test_no_lost_increment(char *detail);
bool smp_test_paging_follows(char *detail);
bool smp_test_ipi(char *detail);

#endif
