/* The run's settings, from the multiboot command line (lib/cmdline.c).
 * Each key is described once in config_keys[]: its name, kind, accepted
 * values and where it lands in struct config. Adding a key is one enum entry
 * plus one table line. */
#ifndef LIB_CONFIG_H
#define LIB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum suite { SUITE_SELFTEST, SUITE_QUICK, SUITE_PAPER, SUITE_ALL, SUITE_SMP };
enum exit_mode { EXIT_AUTO, EXIT_QEMU, EXIT_BOCHS, EXIT_HALT };
enum console_mode { CONSOLE_SERIAL, CONSOLE_VGA, CONSOLE_BOTH };
enum paging_mode { PAGING_OFF, PAGING_ON, PAGING_BOTH };
enum page_size { PAGESIZE_4K, PAGESIZE_4M };
enum fill_kind { FILL_LOOP, FILL_STOS, FILL_SSE };
enum pages_mode { PAGES_4K, PAGES_2M, PAGES_BOTH };
enum counters_mode { COUNTERS_AUTO, COUNTERS_OFF };
/* serial=: a named choice, or (values >= SERIAL_PORT_MIN) an I/O port number */
enum serial_choice { SERIAL_AUTO, SERIAL_COM1, SERIAL_COM2, SERIAL_COM3, SERIAL_COM4, SERIAL_PCI, SERIAL_NONE };
#define SERIAL_PORT_MIN 0x100
#define SERIAL_PORT_MAX 0xfff8
enum qr_mode { QR_AUTO, QR_ON, QR_OFF };
/* `tsc=`: the values are enum tsc_source's (arch/tsc.h), in its order */
enum provoke { PROVOKE_NONE, PROVOKE_DE, PROVOKE_UD, PROVOKE_PF, PROVOKE_GP, PROVOKE_STACK, PROVOKE_FIBER, PROVOKE_HANG, PROVOKE_MC, PROVOKE_UC, PROVOKE_CPUIDLIMIT, PROVOKE_CPUFAULT, PROVOKE_FBWINDOW };

enum config_key {
    KEY_SUITE,
    KEY_BENCH,
    KEY_EXIT,
    KEY_CONSOLE,
    KEY_PAGING,
    KEY_PAGESIZE,
    KEY_RUNS,
    KEY_WARMUP,
    KEY_REPS,
    KEY_SIZES,
    KEY_MAXSIZE,
    KEY_FILL,
    KEY_RAW,
    KEY_PROVOKE,
    KEY_SWITCH,
    KEY_PAGES,
    KEY_COUNTERS,
    KEY_SERIAL,
    KEY_TSC,
    KEY_QR,
    KEY_SERIAL_CLOCK,
    KEY_CPUS,
    KEY_PRECISION,
    KEY_BUDGET,
    KEY_OVERSUBSCRIBE,
    KEY_REPLICAS,
    KEY_DELAY,
    KEY_LAYOUT,
    KEY_COPIES,
    KEY_MARGIN,
    KEY_ADDED,
    KEY_COUNT
};

enum key_kind {
    KIND_ENUM,      /* one of values[] */
    KIND_COUNT,     /* decimal whole number in [min, max] */
    KIND_SIZE,      /* bytes, optional K/M/G suffix (powers of 1024) */
    KIND_SIZE_LIST, /* comma-separated sizes */
    KIND_NAME_LIST, /* comma-separated names from a list given at parse time */
    KIND_FLAG,      /* 0 or 1 */
    KIND_ENUM_OR_PORT, /* one of values[], or 0x<hex> an I/O port in [SERIAL_PORT_MIN, SERIAL_PORT_MAX] */
    KIND_COUNT_OR_WORD, /* a whole number in [min, max], or the word values[0] ("all", "auto"; stored as 0) */
    KIND_COUNT_OR_SECONDS, /* a whole number in [min, max], or N seconds "Ns" (1 to max; stored as N | CFG_SECONDS) */
};

/* runs=auto is stored as runs 0; a budget= in seconds carries this bit */
#define CFG_RUNS_AUTO 0u
#define CFG_SECONDS 0x80000000u
#define CFG_SECONDS_MAX 86400u

#define CFG_MAX_SIZES 64
#define SMP_CPUS_MAX 32 /* cpus= at most (kernel/smp.h's SMP_MAX_CPUS) */
#define CFG_MAX_BENCHES 32

struct config {
    uint32_t suite, exit, console, paging, pagesize, fill, raw, provoke, switch_kind, pages, counters;
    uint32_t tsc;
    uint32_t qr; /* enum qr_mode */
    uint32_t runs, warmup, reps; /* runs CFG_RUNS_AUTO: runs=auto */
    uint32_t precision; /* runs=auto: basis points of the key quantity's interval width */
    uint32_t budget;    /* runs=auto: rounds per set at most, or seconds | CFG_SECONDS */
    uint32_t cpus; /* CPUs to use, the boot CPU included; 0: all there are */
    uint32_t oversubscribe; /* hosted: cpus= workers over fewer CPUs (logic, not speed) */
    /* this boot (hosted: process) is one of `replicas` that the host merges
     * into one set: runs= and runs=auto's minimum and budget are shared out
     * among them (bench/harness.c) */
    uint32_t replicas;
    uint32_t delay; /* tests only: a planted slowdown of ctxsw's round robin (bench/ctxsw.c) */
    /* the seed of each round's layout (bench/harness.c: its stack frames and
     * fiber stacks moved by 0-4080 bytes); 0: off. Not given: one from the
     * TSC at start (app/suite.c), so each process or boot samples its own */
    uint32_t layout;
    uint32_t copies; /* bench asm: the user's code unrolled n times (and 2n) */
    /* runs=auto across processes or boots: the margin (basis points of a
     * quantity's baseline) inside which the host calls an effect negligible;
     * the kernel only reports it (tools/cleanroom_host/stats/sequence.py) */
    uint32_t margin;
    /* this boot (hosted: process) is the N-th the host added to a run of
     * replicas= boots to decide the sets still open (its bench= and sizes=
     * name them); the host merges it with that run. 0: not one */
    uint32_t added;
    uint32_t serial; /* enum serial_choice, or an I/O port (>= SERIAL_PORT_MIN) */
    uint32_t serial_clock; /* Hz of the PCI UARTs' clock; 0: lib/uartclock.c's table, else unverified */
    uint64_t maxsize;
    uint64_t sizes[CFG_MAX_SIZES];
    uint32_t nsizes;
    uint32_t benches[CFG_MAX_BENCHES]; /* indices into the benchmark registry */
    uint32_t nbenches;
    bool given[KEY_COUNT]; /* set on the command line (else a default) */
};

struct key_spec {
    const char *name;
    enum key_kind kind;
    const char *const *values; /* KIND_ENUM: NULL-terminated accepted values; KIND_COUNT_OR_WORD: the word */
    uint64_t min, max;         /* KIND_COUNT(_OR_*), KIND_SIZE, KIND_SIZE_LIST */
    size_t offset;             /* field in struct config */
    const char *help;          /* one line for docs and error messages */
};

extern const struct key_spec config_keys[KEY_COUNT];

void config_defaults(struct config *cfg);
/* Name of the value an enum key holds, e.g. config_value_name(cfg, KEY_SUITE). */
const char *config_value_name(const struct config *cfg, enum config_key key);
uint32_t *config_field_u32(struct config *cfg, enum config_key key);

#endif
