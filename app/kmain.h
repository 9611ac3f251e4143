#ifndef APP_KMAIN_H
#define APP_KMAIN_H

#include <stdint.h>

#include "kernel/multiboot.h"

/* Entered from boot/boot.asm with the multiboot magic and info pointer. */
__attribute__((noreturn)) void kmain(uint32_t magic, const struct multiboot_info *mbi);

#endif
