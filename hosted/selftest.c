/* The self-tests check the bare-metal kernel (descriptor tables, paging,
 * faults); a process cannot run them. */
#include "kernel/record.h"
#include "kernel/selftest.h"
#include "kernel/wire.h"

void selftest_run(void)
{
    rec_begin(REC_SKIP);
    rec_str("what", "selftest");
    rec_str("bench", 0);
    rec_str("why", "hosted: the self-tests check the bare-metal kernel; boot it (tools/cleanroom run)");
    rec_end();
}
