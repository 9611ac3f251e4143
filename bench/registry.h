/* Every benchmark, in one table (bench/registry.def: one line each).
 * Adding a benchmark is one file in bench/ plus one line there. */
#ifndef BENCH_REGISTRY_H
#define BENCH_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/harness.h"
#include "lib/cmdline.h"

struct bench {
    const char *name;
    const char *what;               /* one line for docs and the screen */
    bool in_quick;                  /* part of suite=quick */
    bool in_smp;                    /* part of suite=smp (needs cpus= of 2 or more) */
    bool needs_paging;              /* runs only with paging on (app/suite.c) */
    /* Compares the memory modes itself (bench/vmmode.h: paging off and on in
     * the kernel, 4 KiB and 2 MiB pages hosted), sample by sample: the suite
     * runs it once per boot, in the first pass it is selected for, leaves
     * paging to its vm_enter/vm_leave, and skips it (with vm_modes' reason)
     * when no mode can run. */
    bool vm_axis;
    /* NULL when the benchmark can run here, else why not (skip record). */
    const char *(*unavailable)(const struct config *cfg);
    void (*run)(struct bench_ctx *ctx);
};

extern const struct bench *const bench_registry[];
extern const uint32_t bench_count;
/* The names in registry order, for cmdline validation (bench=). */
const struct name_list *bench_name_list(void);

#endif
