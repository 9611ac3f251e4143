#ifndef APP_KMAIN_H
#define APP_KMAIN_H

#include <stdint.h>

/* Entered from boot/boot.asm with what the loader left in EAX (the
 * multiboot v1 or multiboot2 magic) and EBX (its information's address). */
__attribute__((noreturn)) void kmain(uint32_t magic, uint32_t info);

#endif
