/* A process reads no MSRs: the bit is the host kernel's business (Linux
 * clears it at boot). */
#include "arch/cpuidlimit.h"

void cpuidlimit_lift(bool set_first) { (void)set_first; }
const char *cpuidlimit_state(void) { return "hosted"; }
