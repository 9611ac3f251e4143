/* The hardware events cleanroom counts (kernel/counters.h) and names on the
 * wire (kernel/counters_record.h): below both, so that neither includes the
 * other. */
#ifndef KERNEL_COUNTER_EVENTS_H
#define KERNEL_COUNTER_EVENTS_H

enum counter_event {
    CTR_CORE_CYCLES,   /* the core clock, not the TSC */
    CTR_INSTRUCTIONS,
    CTR_L1D_MISSES,    /* L1d read misses */
    CTR_LLC_MISSES,    /* last-level cache misses */
    CTR_DTLB_MISSES,   /* dTLB read misses */
    CTR_COUNT
};

#endif
