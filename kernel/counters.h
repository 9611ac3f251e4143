/* Hardware event counters read around every recorded sample, beside the
 * TSC: what a case cost in core cycles, instructions and misses, so a
 * result can say why it costs what it costs.
 *
 * The hosted build opens a perf_event group (user mode only): core cycles,
 * instructions, L1d read misses, last-level-cache misses, dTLB read misses.
 * The kernel does not program the PMU: every event is absent, with the
 * reason. An absent event is a named skip in the `counters` record, never a
 * failed run. */
#ifndef KERNEL_COUNTERS_H
#define KERNEL_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/counter_events.h"
#include "lib/config.h"

/* Opens what the platform and cfg (counters=auto|off) allow, and writes the
 * `counters` record (kernel/counters_record.h) naming every event with
 * whether it opened and why not. */
void counters_init(const struct config *cfg);
/* How many events opened (0: none; the harness then reads nothing). */
uint32_t counters_open(void);
bool counters_has(enum counter_event e);
/* A snapshot of every event (0 for absent ones), as cheap as the platform
 * allows: one read of the whole group. */
void counters_read(uint64_t v[CTR_COUNT]);
/* Stop and restart counting around code that must not run with counters
 * open (per-thread counters make every thread switch trap to the hypervisor
 * of a virtual machine: the peers' pthread cases). */
void counters_pause(void);
void counters_resume(void);

#endif
