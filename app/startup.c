#include "app/startup.h"

#include "app/suite.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/registry.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "lib/cmdline.h"
#include "lib/fmt.h"
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

/* A line longer than the buffer: its kept tokens were parsed, the cut ones
 * never are; one error names the length, the limit and what was left out. */
static int report_cmdline_cut(const struct cmdline_cut *cut)
{
    if (!cut->tokens)
        return 0;
    unsigned limit = CMDLINE_MAX - 1;
    int first = 0; /* the first cut token's length in cut->named */
    while (cut->named[first] && cut->named[first] != ' ')
        first++;
    char msg[320], token[CMDLINE_CUT_NAMED], accepted[64];
    fmt(msg, sizeof msg, "command line cut: %u bytes, the kernel keeps at most %u; %u token%s not read: %s",
        (unsigned)cut->len, limit, (unsigned)cut->tokens, cut->tokens == 1 ? "" : "s", cut->named);
    fmt(token, sizeof token, "%.*s", first, cut->named);
    fmt(accepted, sizeof accepted, "a command line of at most %u bytes", limit);
    rec_begin(REC_ERROR);
    rec_str("code", "cmdline");
    rec_str("msg", msg);
    rec_str("token", token);
    rec_str("accepted", accepted);
    rec_u64("len", cut->len);
    rec_u64("limit", limit);
    rec_u64("cut_tokens", cut->tokens);
    rec_str("cut", cut->named);
    rec_end();
    console_say(VGA_RED, "cmdline: %s", msg);
    return 1;
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
    errors += report_cmdline_cut(&boot_info()->cut);
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

void startup_layout_seed(struct config *cfg)
{
    if (cfg->given[KEY_LAYOUT])
        return;
    uint64_t t = rdtsc();
    uint32_t seed = (uint32_t)t ^ (uint32_t)(t >> 32) ^ (uint32_t)(t >> 17);
    cfg->layout = seed ? seed : 1;
}
