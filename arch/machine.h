/* Making the machine quiet, and the FPU usable. */
#ifndef ARCH_MACHINE_H
#define ARCH_MACHINE_H

#include <stdint.h>

/* The clean room: interrupts off for the whole run, both PICs masked, NMI
 * masked at the CMOS index port. Only the boot CPU runs: the others stay in
 * the wait-for-SIPI state the firmware left them in, since we never send
 * them an INIT/SIPI. */
void machine_quiet(void);
/* Caches on: some firmware (Bochs' BIOS, for one) hands over with CR0.CD
 * and CR0.NW set, which would make every memory access uncached. Returns
 * CR0 as the loader left it, for the record. */
uint32_t machine_caches_on(void);
/* x87 initialised, and SSE state enabled (CR4.OSFXSR) where FXSR exists. */
void machine_fpu_init(void);

#endif
