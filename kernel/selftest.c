#include "kernel/selftest.h"

#include "kernel/console.h"
#include "kernel/finish.h"
#include "lib/record.h"
#include "lib/wire.h"

void selftest_report(const char *name, bool ok, const char *detail)
{
    rec_begin(REC_TEST);
    rec_str("name", name);
    rec_bool("ok", ok);
    rec_str("detail", detail);
    rec_end();
    finish_count_test(ok);
    console_say(ok ? VGA_GREEN : VGA_RED, "  %s %s %s", ok ? "PASS" : "FAIL", name, detail);
}
