#include "app/startup.h"

#include "app/suite.h"
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "lib/cmdline.h"
#include "lib/record.h"
#include "lib/wire.h"

static void report_cmdline_error(void *ctx, const char *token, const char *msg, const char *accepted)
{
    (void)ctx;
    rec_begin(REC_ERROR);
    rec_str("code", "cmdline");
    rec_str("msg", msg);
    rec_str("token", token);
    rec_str("accepted", accepted);
    rec_end();
    console_say(VGA_RED, "cmdline: %s: '%s' (accepted: %s)", msg, token, accepted);
}

const struct config *startup_early_config(void)
{
    static struct config early; /* too large for the boot stack's comfort */
    static bool parsed;
    if (!parsed) {
        cmdline_parse(boot_info()->cmdline, &early, 0, 0, 0);
        parsed = true;
    }
    return &early;
}

void startup_config(struct config *cfg)
{
    int errors = cmdline_parse(boot_info()->cmdline, cfg, bench_name_list(), report_cmdline_error, 0);
    exit_set_mode(cfg->given[KEY_EXIT] ? (enum exit_mode)cfg->exit : EXIT_AUTO);
    console_set_mode(cfg->given[KEY_CONSOLE] ? (enum console_mode)cfg->console : CONSOLE_BOTH);
    tsc_force(cfg->tsc);
    if (errors)
        finish_run(RUN_CONFIG);
    suite_defaults(cfg);
}

void startup_require_tsc(void)
{
    if (tsc_init())
        return;
    rec_begin(REC_ERROR);
    rec_str("code", "no_tsc");
    rec_str("msg", "this CPU has no time stamp counter (CPUID.1:EDX.TSC = 0): nothing can be timed");
    rec_end();
    console_say(VGA_RED, "no time stamp counter: nothing can be timed");
    finish_run(RUN_FAIL);
}
