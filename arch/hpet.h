/* The HPET's main counter: at least 10 MHz, its period in femtoseconds in
 * the capabilities register, its registers where the ACPI HPET table says. */
#ifndef ARCH_HPET_H
#define ARCH_HPET_H

#include <stdbool.h>

#include "arch/timebase.h"

/* Describes the main counter as a time base, enabling it if the firmware
 * left it halted (tb->release halts it again); false, with why, when there
 * is no usable HPET. */
bool hpet_timebase(struct timebase *tb, const char **why);

#endif
