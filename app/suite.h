/* What a boot runs: the self-tests and/or the benchmarks that suite= and
 * bench= select, under the paging modes paging= asks for; then `done`. */
#ifndef APP_SUITE_H
#define APP_SUITE_H

#include "lib/config.h"

/* Fills in what the suite implies for keys the command line did not give:
 * quick and paper: paging=both, and each suite's maxsize, runs and warmup
 * (lib/defaults.h; the kernel's and the hosted build's quick differ). */
void suite_defaults(struct config *cfg);
__attribute__((noreturn)) void suite_run(const struct config *cfg);

#endif
