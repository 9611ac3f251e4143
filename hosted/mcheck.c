/* Machine checks belong to the host's kernel, which handles them itself. */
#include "arch/mcheck.h"

void mcheck_init(void) {}
bool mcheck_enabled(void) { return false; }
const char *mcheck_why(void) { return "not available in a Linux process (the host's kernel handles machine checks)"; }
uint32_t mcheck_banks(void) { return 0; }
uint32_t mcheck_stale(const struct mcheck_stale **list)
{
    *list = 0;
    return 0;
}
void mcheck_summary(struct mcheck_summary *s) { *s = (struct mcheck_summary){ false, 0, -1, 0 }; }
void mcheck_provoke(void) {}
