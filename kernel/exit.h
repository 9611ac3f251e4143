/* Leaving the machine: QEMU's isa-debug-exit (port 0xf4), Bochs' shutdown
 * port (0x8900), or a halt with the result on screen. exit=auto picks from
 * what exit_detect() found and never writes to an unusual port on real
 * hardware. */
#ifndef KERNEL_EXIT_H
#define KERNEL_EXIT_H

#include "lib/config.h"
#include "lib/wire.h"

enum platform { PLATFORM_HARDWARE, PLATFORM_QEMU, PLATFORM_BOCHS };

#define QEMU_DEBUG_EXIT_PORT 0xf4
#define BOCHS_SHUTDOWN_PORT 0x8900

/* Detects the platform (call once CPU identification is done). */
void exit_detect(const char *loader_name);
enum platform exit_platform(void);
/* "bare" for the kernel, "hosted" for the Linux build (hello.platform). */
const char *exit_environment(void);
const char *exit_platform_name(void);
/* The exit method exit=auto resolved to ("qemu", "bochs" or "halt"). */
void exit_set_mode(enum exit_mode mode);
const char *exit_method_name(void);
/* The run ends by halting the machine (its screen stays): exit=halt, or
 * exit=auto on real hardware. */
bool exit_halts(void);
__attribute__((noreturn)) void exit_now(enum run_status status);
/* Stops without a done record and without exiting, as a hung machine would
 * (provoke=hang): the host must notice the silence. */
__attribute__((noreturn)) void exit_stall(void);

#endif
