/* Every benchmark, in one table (bench/registry.def: one line each).
 * Adding a benchmark is one file in bench/ plus one line there. */
#ifndef BENCH_REGISTRY_H
#define BENCH_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/harness.h"
#include "lib/cmdline.h"

extern const struct bench *const bench_registry[];
extern const uint32_t bench_count;
/* The names in registry order, for cmdline validation (bench=). */
const struct name_list *bench_name_list(void);

#endif
