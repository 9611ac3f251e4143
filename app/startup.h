/* The start of a run that the bare-metal kernel (app/kmain.c) and the
 * hosted build (hosted/main.c) share: the command line checked before
 * anything is measured, and the TSC required. */
#ifndef APP_STARTUP_H
#define APP_STARTUP_H

#include "lib/config.h"

/* Parses boot_info()->cmdline into cfg, applies exit= and console= and the
 * suite's defaults. A bad line: error records, then done(config). */
void startup_config(struct config *cfg);
/* The command line parsed once, silently, for what must be chosen before
 * the first record (serial=, qr=): a rejected token keeps its default here,
 * and startup_config reports it once a port carries records. */
const struct config *startup_early_config(void);
/* No TSC: an error record, then done(fail). */
void startup_require_tsc(void);
/* layout= not given, in a process of the hosted build: a seed from the TSC,
 * so that each process lays its rounds out its own way (bench/harness.c).
 * A boot keeps config_defaults' one seed, so that a boot under -icount (and
 * the cache model) repeats to the instruction. After startup_require_tsc. */
void startup_layout_seed(struct config *cfg);

#endif
