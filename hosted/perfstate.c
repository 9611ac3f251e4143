/* APERF/MPERF and the SMI count are MSRs: not readable from user space. */
#include "arch/perfstate.h"

#define NO_MSR "not available in a Linux process (no MSR access from user space)"

void perfstate_init(void) {}
bool perfstate_has_aperf_mperf(void) { return false; }
bool perfstate_has_smi(void) { return false; }
const char *perfstate_aperf_mperf_why(void) { return NO_MSR; }
const char *perfstate_smi_why(void) { return NO_MSR; }
void perfstate_read(struct perfstate *p) { *p = (struct perfstate){ 0, 0, 0 }; }
