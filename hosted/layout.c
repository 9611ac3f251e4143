/* One address-space layout for every run (hosted/platform.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/personality.h>
#include <unistd.h>

#include "hosted/platform.h"

/* Set in the environment of the re-executed process: never loop. */
#define REEXEC_MARK "CLEANROOM_HOSTED_REEXEC"

const char *hosted_fixed_layout(char **argv)
{
    int now = personality(0xffffffff);
    if (now == -1)
        return "on (personality() is not available)";
    if (now & ADDR_NO_RANDOMIZE)
        return "off";
    if (getenv(REEXEC_MARK))
        return "on (the re-executed program still had randomisation)";
    if (personality((unsigned long)now | ADDR_NO_RANDOMIZE) == -1)
        return "on (personality(ADDR_NO_RANDOMIZE) was refused)";
    setenv(REEXEC_MARK, "1", 1);
    execv("/proc/self/exe", argv);
    return "on (re-executing /proc/self/exe failed)";
}
