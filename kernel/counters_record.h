/* The `counters` record and the events' wire names, shared by the kernel
 * (no PMU programmed) and the hosted build (perf_event). */
#ifndef KERNEL_COUNTERS_RECORD_H
#define KERNEL_COUNTERS_RECORD_H

#include <stdbool.h>

#include "kernel/counter_events.h"

/* "core_cycles", "instructions", ... (lib/wire.h). */
const char *counters_name(enum counter_event e);
/* One `counters` record: `events`, an array of {name, ok, why} in enum
 * order (why: NULL when the event opened), and `scope` (what is counted,
 * e.g. "user"; NULL: nothing is). */
void counters_record(const bool opened[CTR_COUNT], const char *const why[CTR_COUNT], const char *scope);

#endif
