/* Reporting a self-test: one `test` record per check (name, ok, detail),
 * counted for done.passed/failed. The checks themselves are listed in
 * app/selftests.c; the runtime's own in runtime/fiber_selftest.c,
 * sync_selftest.c and uthread_selftest.c. */
#ifndef KERNEL_SELFTEST_H
#define KERNEL_SELFTEST_H

#include <stdbool.h>

#define SELFTEST_DETAIL_MAX 200

/* A check: true when it passes; writes one line of detail either way. */
typedef bool (*selftest_fn)(char *detail);

/* One test record, counted for done.passed/failed. */
void selftest_report(const char *name, bool ok, const char *detail);

#endif
