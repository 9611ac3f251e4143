#include "kernel/exit.h"

#include "arch/cpu.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/serial.h"
#include "lib/string.h"

static enum platform platform = PLATFORM_HARDWARE;
static enum exit_mode method = EXIT_AUTO;

/* Looks for a string in the system BIOS ROM (0xF0000-0xFFFFF). Only a
 * memory read: harmless on any PC. */
static bool bios_rom_contains(const char *needle)
{
    const volatile char *rom = (const volatile char *)0xf0000;
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= 0x10000; i++) {
        size_t k = 0;
        while (k < n && rom[i + k] == needle[k])
            k++;
        if (k == n)
            return true;
    }
    return false;
}

void exit_detect(const char *loader_name)
{
    const char *hv = cpu_info()->hypervisor;
    if (str_eq(hv, "TCGTCGTCGTCG") || str_eq(hv, "KVMKVMKVM"))
        platform = PLATFORM_QEMU;
    else if (loader_name && strncmp(loader_name, "qemu", 4) == 0)
        platform = PLATFORM_QEMU; /* QEMU -kernel on a CPU model without the hypervisor bit */
    else if (bios_rom_contains("The Bochs Project"))
        platform = PLATFORM_BOCHS;
}

enum platform exit_platform(void) { return platform; }
const char *exit_environment(void) { return "bare"; }

const char *exit_platform_name(void)
{
    switch (platform) {
    case PLATFORM_QEMU: return "qemu";
    case PLATFORM_BOCHS: return "bochs";
    default: return "hardware";
    }
}

void exit_set_mode(enum exit_mode mode)
{
    method = mode;
    if (mode == EXIT_AUTO)
        method = platform == PLATFORM_QEMU ? EXIT_QEMU : platform == PLATFORM_BOCHS ? EXIT_BOCHS : EXIT_HALT;
}

bool exit_halts(void) { return method == EXIT_HALT; }

const char *exit_method_name(void)
{
    switch (method) {
    case EXIT_QEMU: return "qemu";
    case EXIT_BOCHS: return "bochs";
    default: return "halt";
    }
}

void exit_now(enum run_status status)
{
    serial_drain();
    if (method == EXIT_QEMU) {
        /* QEMU exits with (status << 1) | 1. Without the device the write
         * is ignored and we fall through to the halt. */
        outb(QEMU_DEBUG_EXIT_PORT, (uint8_t)status);
    } else if (method == EXIT_BOCHS) {
        for (const char *p = "Shutdown"; *p; p++)
            outb(BOCHS_SHUTDOWN_PORT, (uint8_t)*p);
    }
    console_say(VGA_WHITE, "cleanroom: done. It is safe to switch the machine off.");
    halt_forever();
}

void exit_stall(void)
{
    serial_drain();
    console_say(VGA_YELLOW, "provoke=hang: stopped before the done record, on purpose");
    halt_forever();
}
