#include "app/suite.h"

#include "app/selftests.h"
#include "arch/mcheck.h"
#include "arch/mtrr.h"
#include "arch/paging.h"
#include "arch/x86.h"
#include "bench/registry.h"
#include "bench/vmmode.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/fault.h"
#include "kernel/finish.h"
#include "kernel/smp.h"
#include "lib/defaults.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "runtime/overflow.h"

/* The suites' benchmarks: the duration estimate reads the same rule from the
 * registry and each struct bench (tools/cleanroom_host/machines/registry.py). */
static bool selected(const struct config *cfg, uint32_t index)
{
    if (cfg->given[KEY_BENCH]) {
        for (uint32_t i = 0; i < cfg->nbenches; i++)
            if (cfg->benches[i] == index)
                return true;
        return false;
    }
    switch (cfg->suite) {
    case SUITE_QUICK: return bench_registry[index]->in_quick;
    case SUITE_SMP: return bench_registry[index]->in_smp;
    case SUITE_PAPER:
    case SUITE_ALL: return !bench_registry[index]->by_name_only;
    default: return false;
    }
}

static void skip_bench(const struct bench *b, const char *why)
{
    rec_begin(REC_SKIP);
    rec_str("what", b->name);
    rec_str("bench", b->name);
    rec_str("why", why);
    rec_end();
    console_say(VGA_YELLOW, "%s: skipped: %s", b->name, why);
}

/* A benchmark that compares the memory modes itself (bench->vm_axis): run
 * once per boot, in the first pass, its paging left to bench/vmmode.h. */
static void run_vm_axis(const struct config *cfg, const struct bench *b)
{
    const char *why = 0;
    uint32_t modes = vm_modes(cfg, &why);
    if (!modes) {
        skip_bench(b, why);
        return;
    }
    why = b->unavailable ? b->unavailable(cfg) : 0;
    if (why) {
        skip_bench(b, why);
        return;
    }
    paging_disable(); /* the state every benchmark starts from; vm_enter takes it from here */
    console_say(VGA_CYAN, "%s (%u memory mode%s, sample by sample): %s", b->name, modes, modes > 1 ? "s" : "",
                b->what);
    struct bench_ctx ctx = { b, cfg, cfg->runs, cfg->warmup, 0, 0 };
    fault_set_running(b->name, 0);
    b->run(&ctx);
    fault_set_running(0, 0);
    paging_disable();
}

static void run_benches(const struct config *cfg, bool paging_on)
{
    enum page_size ps = (enum page_size)cfg->pagesize;
    /* paging=both runs the off pass first; paging=on has only the on pass */
    bool first_pass = !paging_on || cfg->paging == PAGING_ON;
    for (uint32_t i = 0; i < bench_count; i++) {
        const struct bench *b = bench_registry[i];
        if (!selected(cfg, i))
            continue;
        if (b->vm_axis) {
            if (first_pass) /* it measured every mode there: nothing to say in the other pass */
                run_vm_axis(cfg, b);
            continue;
        }
        /* what the benchmark itself cannot do here comes first: a kernel-only
         * benchmark in the hosted build says so, not that paging is fixed */
        const char *why = b->unavailable ? b->unavailable(cfg) : 0;
        if (why) {
            skip_bench(b, why);
            continue;
        }
        bool on = paging_on;
        if (b->needs_paging && !paging_on) {
            /* paging=off by default: such a benchmark runs with paging on
             * instead; given paging=off, or in paging=both's off pass, not */
            if (cfg->paging == PAGING_BOTH || cfg->given[KEY_PAGING]) {
                skip_bench(b, cfg->paging == PAGING_BOTH ? "needs paging: measured in the paging=on pass"
                                                         : "needs paging, and paging=off was given");
                continue;
            }
            on = true;
        }
        const char *no_paging = on ? paging_unavailable(ps) : 0;
        if (no_paging) {
            skip_bench(b, no_paging);
            continue;
        }
        if (on)
            paging_enable(ps);
        else
            paging_disable();
        console_say(VGA_CYAN, "%s (paging %s): %s", b->name, on ? "on" : "off", b->what);
        struct bench_ctx ctx = { b, cfg, cfg->runs, cfg->warmup, 0, 0 };
        fault_set_running(b->name, 0);
        b->run(&ctx);
        fault_set_running(0, 0);
        paging_disable();
    }
}

/* The quick suite's sweep and runs: the hosted build's reach past a real
 * machine's last-level cache (lib/defaults.h says why). */
#ifdef CLEANROOM_HOSTED
#define QUICK_MAXSIZE CR_DEF_QUICK_MAXSIZE_HOSTED
#define QUICK_RUNS CR_DEF_QUICK_RUNS_HOSTED
#define QUICK_BUDGET CR_DEF_QUICK_BUDGET_HOSTED
#else
#define QUICK_MAXSIZE CR_DEF_QUICK_MAXSIZE_KERNEL
#define QUICK_RUNS CR_DEF_QUICK_RUNS_KERNEL
#define QUICK_BUDGET CR_DEF_QUICK_BUDGET_KERNEL
#endif

void suite_defaults(struct config *cfg)
{
    if (cfg->suite == SUITE_SMP && !cfg->given[KEY_CPUS])
        cfg->cpus = 0; /* the multi-CPU suite: every CPU there is, unless cpus= says */
    if (cfg->suite != SUITE_QUICK && cfg->suite != SUITE_PAPER)
        return;
    bool quick = cfg->suite == SUITE_QUICK;
    if (!cfg->given[KEY_PAGING])
        cfg->paging = PAGING_BOTH;
    if (!cfg->given[KEY_MAXSIZE])
        cfg->maxsize = quick ? QUICK_MAXSIZE : CR_DEF_PAPER_MAXSIZE;
    if (!cfg->given[KEY_RUNS])
        cfg->runs = quick ? QUICK_RUNS : CR_DEF_PAPER_RUNS;
    if (!cfg->given[KEY_BUDGET] && quick)
        cfg->budget = QUICK_BUDGET;
    if (!cfg->given[KEY_WARMUP])
        cfg->warmup = quick ? CR_DEF_QUICK_WARMUP : CR_DEF_PAPER_WARMUP;
}

static void invalid_opcode(void *arg)
{
    (void)arg;
    ud2();
}

static void provoke_skip(const char *what, const char *why)
{
    rec_begin(REC_SKIP);
    rec_str("what", what);
    rec_null("bench");
    rec_str("why", why);
    rec_end();
}

/* provoke=: an exception nobody expects, so the fault path can be tested
 * end to end (record, status, exit code) on every platform. */
static void provoke_fault(enum provoke what)
{
    volatile uint32_t dividend = 1, zero = 0;
    fault_set_running("provoke", config_keys[KEY_PROVOKE].values[what]);
    switch (what) {
    case PROVOKE_DE:
        dividend /= zero;
        break;
    case PROVOKE_UD:
        ud2();
        break;
    case PROVOKE_PF:
        paging_enable(PAGESIZE_4K);
        (void)*(volatile uint32_t *)0x10; /* page 0 is never mapped */
        break;
    case PROVOKE_GP:
        load_ds(0xfff8); /* beyond the GDT's limit */
        break;
    case PROVOKE_STACK:
        paging_enable(PAGESIZE_4K);
        overflow_recurse(0);
        break;
    case PROVOKE_FIBER:
        paging_enable(PAGESIZE_4K); /* the guard page exists with paging on */
        fiber_overflow_run();
        break;
    case PROVOKE_MC:
        mcheck_provoke();
        break;
    case PROVOKE_UC: { /* not an exception: memory the benchmarks then refuse */
        const char *why = mtrr_provoke_uncached();
        if (why)
            provoke_skip("provoke=uc", why);
        break;
    }
    case PROVOKE_CPUFAULT: /* on another CPU: the boot CPU names it */
        if (smp_cpus() < 2) {
            provoke_skip("provoke=cpufault", "needs a second CPU (cpus=2 or more)");
            break;
        }
        smp_post(1, invalid_opcode, 0);
        smp_wait(1);
        break;
    default:
        break;
    }
    fault_set_running(0, 0);
}

void suite_run(const struct config *cfg)
{
    enum run_status status = RUN_OK;
    if (cfg->suite == SUITE_PAPER || cfg->suite == SUITE_ALL) /* hours with interrupts off */
        console_say(VGA_YELLOW, "a long run: an armed watchdog (BMC, chipset TCO) would reset the machine; see docs/HARDWARE.md");
    provoke_fault((enum provoke)cfg->provoke);
    if (cfg->suite == SUITE_SELFTEST || cfg->suite == SUITE_ALL) {
        selftests_run();
        if (finish_tests_failed())
            status = RUN_FAIL;
    }
    if (cfg->paging != PAGING_ON)
        run_benches(cfg, false);
    if (cfg->paging != PAGING_OFF)
        run_benches(cfg, true);
    if (cfg->provoke == PROVOKE_HANG)
        exit_stall();
    finish_run(status);
}
