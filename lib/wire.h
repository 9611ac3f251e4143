/* The wire format of protocol v1, defined once. docs/PROTOCOL.md quotes
 * these names; tests/test_docs.py checks that it still does. */
#ifndef LIB_WIRE_H
#define LIB_WIRE_H

#define WIRE_PROTO_VERSION 1
#define WIRE_MARKER "@cr1 "   /* starts every record line */
#define WIRE_CRC_SEP " ~"     /* between the JSON and its CRC-32 */
#define WIRE_EOL "\r\n"       /* ends every record line */
#define WIRE_CRC_DIGITS 8     /* lowercase hex digits of the CRC-32 */
/* Ends the line "cleanroom <version>: records follow (protocol v1)" the
 * kernel prints before its first record: where a boot begins in a log. */
#define WIRE_BANNER_TAIL ": records follow (protocol v1)"

/* Record types ("t"). */
#define REC_HELLO "hello"
#define REC_CPU "cpu"
#define REC_TSC "tsc"
#define REC_MEM "mem"
#define REC_CONFIG "config"
#define REC_PROGRESS "progress"
#define REC_RESULT "result"
#define REC_TEST "test"
#define REC_SKIP "skip"
#define REC_ERROR "error"
#define REC_FAULT "fault"
#define REC_THREAD_FAULT "thread_fault"
#define REC_DONE "done"
#define REC_COUNTERS "counters"
#define REC_EVIDENCE "evidence"
#define REC_SMP "smp"

/* result.sums: its samples and statistics are totals over `per`
 * operations; the host divides them (decimals) and says "divided": "host". */
#define WIRE_SUMS "sums"
/* progress.user: the next case runs the user's code of this name (a hang
 * from there is that code's); fault.user: where in the user's code. */
#define WIRE_USER "user"

/* Hardware event names (counters record, result.counters), in the order of
 * enum counter_event (kernel/counters.h). */
#define CTR_NAME_CORE_CYCLES "core_cycles"
#define CTR_NAME_INSTRUCTIONS "instructions"
#define CTR_NAME_L1D_MISSES "l1d_read_misses"
#define CTR_NAME_LLC_MISSES "llc_misses"
#define CTR_NAME_DTLB_MISSES "dtlb_read_misses"

/* done.status, and the exit status each maps to (isa-debug-exit value). */
#define STATUS_OK "ok"
#define STATUS_FAIL "fail"
#define STATUS_CONFIG "config"
#define STATUS_FAULT "fault"

enum run_status {
    RUN_OK = 0,
    RUN_FAIL = 1,
    RUN_CONFIG = 2,
    RUN_FAULT = 3,
};

#endif
