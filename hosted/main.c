/* cleanroom-hosted: the same records as the kernel, from a Linux process.
 * The sequence mirrors app/kmain.c minus what a process cannot do. */
#include "hosted/platform.h"

#include "app/startup.h"
#include "app/suite.h"
#include "app/sysinfo.h"
#include "arch/cpu.h"
#include "kernel/console.h"
#include "kernel/counters.h"
#include "kernel/evidence_record.h"
#include "kernel/finish.h"
#include "kernel/smp.h"
#include "lib/config.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "runtime/userprims.h"

#define ARENA_SLACK (64ull << 20) /* stacks, samples, the rest of the sweep */

static struct rec_writer records;
static struct config cfg;

/* Enough for the two workset buffers of the largest size, plus slack. */
static uint64_t arena_bytes(const struct config *c)
{
    uint64_t largest = c->maxsize;
    if (c->given[KEY_SIZES]) {
        largest = 0;
        for (uint32_t i = 0; i < c->nsizes; i++)
            if (c->sizes[i] > largest)
                largest = c->sizes[i];
    }
    return 2 * largest + ARENA_SLACK;
}

int main(int argc, char **argv)
{
    hosted_boot_info(argc, argv, hosted_fixed_layout(argv));
    rec_writer_init(&records, console_record_sink, 0);
    rec_attach(&records);
    hosted_fault_init();
    cpu_identify();
    sysinfo_hello();
    startup_config(&cfg);
    sysinfo_cpu(0);
    startup_require_tsc();
    startup_layout_seed(&cfg);
    sysinfo_tsc();
    if (!hosted_memory_init(arena_bytes(&cfg))) {
        rec_begin(REC_ERROR);
        rec_str("code", "memory");
        rec_str("msg", "mmap refused the benchmark arena (sizes too large for a 32-bit process?)");
        rec_end();
        finish_run(RUN_FAIL);
    }
    sysinfo_mem();
    smp_init(cfg.cpus, cfg.oversubscribe);
    sysinfo_smp();
    sysinfo_config(&cfg);
    counters_init(&cfg);
    evidence_record(); /* says once that a process reads no MSRs */
    userprims_load();  /* the user's switch routine and lock, from the files the host named */
    suite_run(&cfg);
}
