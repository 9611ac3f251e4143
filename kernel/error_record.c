#include "kernel/error_record.h"

#include "kernel/console.h"
#include "lib/record.h"
#include "lib/wire.h"

void error_record(const char *code, const char *msg)
{
    rec_begin(REC_ERROR);
    rec_str("code", code);
    rec_str("msg", msg);
    rec_end();
    console_say(VGA_RED, "  %s", msg);
}
