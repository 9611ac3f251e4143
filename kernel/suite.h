/* What a boot runs: the self-tests and/or the benchmarks that suite= and
 * bench= select, under the paging modes paging= asks for; then `done`. */
#ifndef KERNEL_SUITE_H
#define KERNEL_SUITE_H

#include "kernel/config.h"

__attribute__((noreturn)) void suite_run(const struct config *cfg);

#endif
