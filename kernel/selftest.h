/* suite=selftest: the kernel checks itself on the machine it booted on,
 * one `test` record per check (name, ok, detail). */
#ifndef KERNEL_SELFTEST_H
#define KERNEL_SELFTEST_H

#include <stdbool.h>

#define SELFTEST_DETAIL_MAX 200

/* A check: true when it passes; writes one line of detail either way. */
typedef bool (*selftest_fn)(char *detail);

void selftest_run(void);
/* One test record, counted for done.passed/failed (usable by later tests). */
void selftest_report(const char *name, bool ok, const char *detail);

#endif
