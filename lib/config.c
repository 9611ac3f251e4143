#include "lib/config.h"

#include "lib/defaults.h"

static const char *const suite_values[] = { "selftest", "quick", "paper", "all", "smp", 0 };
static const char *const exit_values[] = { "auto", "qemu", "bochs", "halt", 0 };
static const char *const console_values[] = { "serial", "vga", "both", 0 };
static const char *const paging_values[] = { "off", "on", "both", 0 };
static const char *const pagesize_values[] = { "4k", "4m", 0 };
static const char *const fill_values[] = { "loop", "stos", "sse", 0 };
static const char *const provoke_values[] = { "none", "de", "ud", "pf", "gp", "stack", "fiber", "hang", "mc", "uc", "cpuidlimit", "cpufault", "fbwindow", 0 };
static const char *const pages_values[] = { "4k", "2m", "both", 0 };
static const char *const counters_values[] = { "auto", "off", 0 };
/* in the order of enum serial_choice */
static const char *const serial_values[] = { "auto", "com1", "com2", "com3", "com4", "pci", "none", 0 };
/* in the order of enum tsc_source (arch/tsc.h) */
static const char *const tsc_values[] = { "auto", "hpet", "pmtimer", "pit", "cpuid15", "cpuid16", 0 };
/* in the order of enum qr_mode */
static const char *const qr_values[] = { "auto", "on", "off", 0 };
/* in the order of enum switch_kind (runtime/switch.h) */
static const char *const switch_values[] = { "pushad", "callee", "fxsave", "jump", 0 };
/* the word a KIND_COUNT_OR_WORD key takes besides its numbers */
static const char *const all_word[] = { "all", 0 };
static const char *const auto_word[] = { "auto", 0 };
static const char *const off_word[] = { "off", 0 };

#define GIB ((uint64_t)1 << 30)

const struct key_spec config_keys[KEY_COUNT] = {
    [KEY_SUITE] = { "suite", KIND_ENUM, suite_values, 0, 0, offsetof(struct config, suite),
                    "which set of benchmarks or self-tests to run" },
    [KEY_BENCH] = { "bench", KIND_NAME_LIST, 0, 0, 0, offsetof(struct config, benches),
                    "benchmarks to run instead of the suite's" },
    [KEY_EXIT] = { "exit", KIND_ENUM, exit_values, 0, 0, offsetof(struct config, exit),
                   "how the run ends: emulator exit port, or halt on real hardware" },
    [KEY_CONSOLE] = { "console", KIND_ENUM, console_values, 0, 0, offsetof(struct config, console),
                      "records to serial, progress to the VGA screen, or both" },
    [KEY_PAGING] = { "paging", KIND_ENUM, paging_values, 0, 0, offsetof(struct config, paging),
                     "run benchmarks with paging off, on, or both in one boot" },
    [KEY_PAGESIZE] = { "pagesize", KIND_ENUM, pagesize_values, 0, 0, offsetof(struct config, pagesize),
                       "page size of the identity map when paging is on" },
    [KEY_RUNS] = { "runs", KIND_COUNT_OR_WORD, auto_word, 1, 100000, offsetof(struct config, runs),
                   "recorded runs per case, or auto: rounds added until each set's key quantity is known to precision=" },
    [KEY_WARMUP] = { "warmup", KIND_COUNT, 0, 0, 1000, offsetof(struct config, warmup),
                     "unrecorded warm-up runs before the recorded ones" },
    [KEY_REPS] = { "reps", KIND_COUNT, 0, 1, 1000000000, offsetof(struct config, reps),
                   "repetitions inside one run (benchmark-specific meaning)" },
    [KEY_SIZES] = { "sizes", KIND_SIZE_LIST, 0, 0, 2 * GIB, offsetof(struct config, sizes),
                    "working-set sizes in bytes" },
    [KEY_MAXSIZE] = { "maxsize", KIND_SIZE, 0, 0, 2 * GIB, offsetof(struct config, maxsize),
                      "largest working-set size of the default sweep" },
    [KEY_FILL] = { "fill", KIND_ENUM, fill_values, 0, 0, offsetof(struct config, fill),
                   "the buffer-zeroing kernel" },
    [KEY_RAW] = { "raw", KIND_FLAG, 0, 0, 1, offsetof(struct config, raw),
                  "1: add every sample to result records" },
    [KEY_PROVOKE] = { "provoke", KIND_ENUM, provoke_values, 0, 0, offsetof(struct config, provoke),
                      "raise an unexpected CPU exception before the suite (tests the fault path), or hang: stop printing before done (tests the host's silence limit)" },
    [KEY_SWITCH] = { "switch", KIND_ENUM, switch_values, 0, 0, offsetof(struct config, switch_kind),
                     "the fiber switch routine of the two-fiber scenarios (workset multi)" },
    [KEY_PAGES] = { "pages", KIND_ENUM, pages_values, 0, 0, offsetof(struct config, pages),
                    "hosted build: back the workset buffers with 4 KiB or 2 MiB pages, or compare both" },
    [KEY_COUNTERS] = { "counters", KIND_ENUM, counters_values, 0, 0, offsetof(struct config, counters),
                       "hardware event counters around every sample where the platform has them, or off" },
    [KEY_SERIAL] = { "serial", KIND_ENUM_OR_PORT, serial_values, SERIAL_PORT_MIN, SERIAL_PORT_MAX,
                     offsetof(struct config, serial),
                     "where records go: every UART found (auto), one COM port, PCI UARTs, an I/O port, or none" },
    [KEY_TSC] = { "tsc", KIND_ENUM, tsc_values, 0, 0, offsetof(struct config, tsc),
                  "the TSC frequency's source: the best two that agree, or this one" },
    [KEY_QR] = { "qr", KIND_ENUM, qr_values, 0, 0, offsetof(struct config, qr),
                 "after done, show the records as QR codes on screen: when no serial port carried them (auto), always, never" },
    [KEY_SERIAL_CLOCK] = { "serial_clock", KIND_COUNT, 0, 1843200, 1000000000, offsetof(struct config, serial_clock),
                           "the clock (Hz) of the PCI UARTs, from the card's manual: sets their divisor for 115200 baud" },
    [KEY_CPUS] = { "cpus", KIND_COUNT_OR_WORD, all_word, 1, SMP_CPUS_MAX, offsetof(struct config, cpus),
                   "CPUs to use (the boot CPU included): 1 (the clean room of one CPU), N, or all" },
    [KEY_PRECISION] = { "precision", KIND_COUNT, 0, 1, 10000, offsetof(struct config, precision),
                        "runs=auto: the width of each set's key interval to reach, in basis points of its value" },
    [KEY_BUDGET] = { "budget", KIND_COUNT_OR_SECONDS, 0, 1, CR_DEF_AUTO_MAX_RUNS, offsetof(struct config, budget),
                     "runs=auto: recorded rounds per set at most, or Ns: seconds per set" },
    [KEY_OVERSUBSCRIBE] = { "oversubscribe", KIND_FLAG, 0, 0, 1, offsetof(struct config, oversubscribe),
                            "hosted build: 1 runs cpus= workers over fewer CPUs, several a CPU (checks logic at scale; no timing)" },
    [KEY_REPLICAS] = { "replicas", KIND_COUNT, 0, 1, CR_DEF_REPLICAS_MAX, offsetof(struct config, replicas),
                       "this boot (hosted: process) is one of N the host merges into one set: runs= and runs=auto's minimum and budget are shared among them" },
    [KEY_DELAY] = { "delay", KIND_COUNT, 0, 0, 1000, offsetof(struct config, delay),
                    "tests only: N empty calls added to every switch of ctxsw's round robin (a planted slowdown)" },
    [KEY_LAYOUT] = { "layout", KIND_COUNT_OR_WORD, off_word, 1, 0xffffffffu, offsetof(struct config, layout),
                     "the seed of each round's layout (stack frames and fiber stacks moved by 0-4080 bytes), or off; default: hosted one from the TSC, the kernel a fixed one" },
    [KEY_COPIES] = { "copies", KIND_COUNT, 0, 1, CR_DEF_ASM_COPIES_MAX, offsetof(struct config, copies),
                     "bench asm: the copies n of the user's code each sample unrolls (it times n and 2n and keeps the difference)" },
    [KEY_MARGIN] = { "margin", KIND_COUNT, 0, 1, 10000, offsetof(struct config, margin),
                     "runs=auto across processes or boots: an effect inside this margin (basis points of its baseline) is negligible" },
    [KEY_ADDED] = { "added", KIND_COUNT, 0, 0, CR_DEF_ADDED_MAX, offsetof(struct config, added),
                    "set by the host: this boot (process) is the N-th it added to decide the sets still open; merged with the run" },
};

void config_defaults(struct config *cfg)
{
    *cfg = (struct config){
        .suite = SUITE_QUICK,
        .exit = EXIT_AUTO,
        .console = CONSOLE_BOTH,
        .paging = PAGING_OFF,
        .pagesize = PAGESIZE_4K,
        .fill = FILL_STOS,
        .raw = 0,
        .runs = CR_DEF_RUNS,
        .warmup = CR_DEF_WARMUP,
        .reps = 0, /* 0: each benchmark's own default */
        .maxsize = CR_DEF_MAXSIZE,
        .cpus = 1,
        .precision = CR_DEF_AUTO_PRECISION_BP,
        .budget = CR_DEF_AUTO_BUDGET,
        .replicas = 1,
        .layout = CR_DEF_LAYOUT_SEED, /* hosted: one from the TSC instead (app/startup.c) */
        .copies = CR_DEF_ASM_COPIES,
        .margin = CR_DEF_MARGIN_BP,
    };
}

uint32_t *config_field_u32(struct config *cfg, enum config_key key)
{
    return (uint32_t *)((char *)cfg + config_keys[key].offset);
}

const char *config_value_name(const struct config *cfg, enum config_key key)
{
    static char port_name[8]; /* "0xffff": one CPU, read before the next call */
    const struct key_spec *k = &config_keys[key];
    uint32_t v = *config_field_u32((struct config *)cfg, key);
    if (k->kind == KIND_ENUM_OR_PORT && v >= k->min) {
        const char *hex = "0123456789abcdef";
        int n = 0;
        port_name[n++] = '0';
        port_name[n++] = 'x';
        for (int shift = 12; shift >= 0; shift -= 4)
            if ((v >> shift) || shift == 0 || n > 2)
                port_name[n++] = hex[(v >> shift) & 0xf];
        port_name[n] = 0;
        return port_name;
    }
    if (k->kind != KIND_ENUM && k->kind != KIND_ENUM_OR_PORT)
        return 0;
    for (uint32_t i = 0; k->values[i]; i++)
        if (i == v)
            return k->values[i];
    return "?";
}
