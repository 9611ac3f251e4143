/* How a hosted run ends: the process exit status is the done status. */
#define _GNU_SOURCE
#include <unistd.h>

#include "kernel/exit.h"
#include "kernel/serial.h"

void exit_detect(const char *loader_name) { (void)loader_name; }
enum platform exit_platform(void) { return PLATFORM_HARDWARE; }
const char *exit_environment(void) { return "hosted"; }
const char *exit_platform_name(void) { return "hosted"; }
void exit_set_mode(enum exit_mode mode) { (void)mode; }
const char *exit_method_name(void) { return "process"; }

void exit_now(enum run_status status)
{
    serial_drain();
    _exit((int)status);
}

void exit_stall(void)
{
    serial_drain();
    for (;;)
        pause();
}
