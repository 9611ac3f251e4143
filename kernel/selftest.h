/* suite=selftest: the kernel checks itself on the machine it booted on,
 * one `test` record per check (name, ok, detail). */
#ifndef KERNEL_SELFTEST_H
#define KERNEL_SELFTEST_H

#include <stdbool.h>

void selftest_run(void);
/* One test record, counted for done.passed/failed (usable by later tests). */
void selftest_report(const char *name, bool ok, const char *detail);

#endif
