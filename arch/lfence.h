/* AMD's switch that makes lfence dispatch-serialising: bit 1 of MSR
 * C001_1029 (DE_CFG), which AMD documents for families 10h-17h ("Software
 * techniques for managing speculation on AMD processors", 2018). Kernel
 * only: the hosted build's stand-in is in hosted/clock.c. */
#ifndef ARCH_LFENCE_H
#define ARCH_LFENCE_H

#define MSR_AMD_DE_CFG 0xC0011029u
#define DE_CFG_LFENCE_SERIALIZE (1u << 1)

/* Sets the bit and reads it back. "msr" when it stuck; 0 when the MSR
 * faulted (an emulator without it) or the bit did not stay set. */
const char *lfence_make_serialising(void);

#endif
