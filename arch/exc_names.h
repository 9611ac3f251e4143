/* The names of the 32 CPU exception vectors, as the Intel SDM calls them
 * (snake_case): what fault records say. Portable: the hosted build names
 * the exceptions its signals stand for with the same table. */
#ifndef ARCH_EXC_NAMES_H
#define ARCH_EXC_NAMES_H

#include <stdint.h>

const char *exc_sdm_name(uint32_t vector);

#endif
