/* 64-bit division for the kernel. GCC turns every uint64_t '/' and '%' on
 * IA-32 into calls to these libgcc routines; we supply our own rather than
 * link the cross compiler's libgcc, which is built for i686 and may use
 * cmov, an instruction a 486 or Pentium does not have. */
#ifndef LIB_FREESTANDING_DIV64_H
#define LIB_FREESTANDING_DIV64_H

#include <stdint.h>

uint64_t __udivdi3(uint64_t n, uint64_t d);
uint64_t __umoddi3(uint64_t n, uint64_t d);
int64_t __divdi3(int64_t n, int64_t d);
int64_t __moddi3(int64_t n, int64_t d);
uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem);

#endif
