/* A test double of kernel/counters.h, not a measurement: linked in place of
 * hosted/counters.c (perf_event) into build/units/cleanroom-hosted-fakecounters
 * and into nothing else. Every event opens, and reads return synthetic counts
 * a test can predict, so that what the harness does with counters (reading
 * them around each recorded sample, the per-event statistics in each result
 * record, no counters while paused) runs and is checked on any machine, PMU or
 * not (tests/test_hosted.py). The `counters` record's scope says "test double".
 *
 * The counts: reads are numbered k = 0, 1, 2, ... in the order they happen,
 * and pair j is reads 2j and 2j + 1. Event e reads j * FAKE_STRIDE at read 2j
 * and j * FAKE_STRIDE + fake_delta(e, j) at read 2j + 1, so a sample bracketed
 * by one pair (read just before it, read just after it, nothing between)
 * counts exactly fake_delta(e, j) = (e + 1) * FAKE_EVENT_STEP + j of event e:
 * each event its own range of values, the pair's number in every one. */
#include "kernel/counters.h"

#include "kernel/counters_record.h"

#define FAKE_EVENT_STEP 1000000u
#define FAKE_STRIDE (1ull << 40)

static uint64_t reads;
static uint32_t members; /* CTR_COUNT once opened; 0 with counters=off */
static uint32_t paused;  /* nesting depth of counters_pause, as hosted/counters.c keeps it */

static uint64_t fake_delta(uint32_t e, uint64_t j) { return (uint64_t)(e + 1) * FAKE_EVENT_STEP + j; }

void counters_init(const struct config *cfg)
{
    bool opened[CTR_COUNT];
    const char *why[CTR_COUNT];
    bool on = cfg->counters != COUNTERS_OFF;
    for (uint32_t e = 0; e < CTR_COUNT; e++) {
        opened[e] = on;
        why[e] = on ? 0 : "counters=off";
    }
    reads = 0;
    paused = 0;
    members = on ? CTR_COUNT : 0;
    counters_record(opened, why, on ? "test double" : 0);
}

uint32_t counters_open(void) { return paused ? 0 : members; }
bool counters_has(enum counter_event e) { return !paused && members && (unsigned)e < CTR_COUNT; }

void counters_read(uint64_t v[CTR_COUNT])
{
    uint64_t k = reads++, j = k / 2;
    for (uint32_t e = 0; e < CTR_COUNT; e++)
        v[e] = members ? j * FAKE_STRIDE + (k % 2 ? fake_delta(e, j) : 0) : 0;
}

void counters_pause(void)
{
    if (members)
        paused++;
}

void counters_resume(void)
{
    if (members && paused)
        paused--;
}
