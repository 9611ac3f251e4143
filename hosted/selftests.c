/* The self-tests check the bare-metal kernel (descriptor tables, paging,
 * faults); a process cannot run them. */
#include "app/selftests.h"
#include "lib/record.h"
#include "lib/wire.h"

void selftests_run(void)
{
    rec_begin(REC_SKIP);
    rec_str("what", "selftest");
    rec_str("bench", 0);
    rec_str("why", "hosted: the self-tests check the bare-metal kernel; boot it (tools/cleanroom run)");
    rec_end();
}
