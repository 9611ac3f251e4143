/* The local APIC of the CPU that calls: its id, and the IPIs the boot CPU
 * sends to start and signal the others (INIT, SIPI, one fixed vector).
 *
 * xAPIC through its MMIO page (uncached; the address from IA32_APIC_BASE),
 * or x2APIC through MSRs when the firmware left it enabled (a CPU in x2APIC
 * mode cannot go back to xAPIC without a reset). Every LVT entry is masked
 * and the timer does not run while anything is measured: the only
 * interrupts a CPU can get are the IPIs a benchmark sends, and only while
 * that CPU has IF=1 on purpose, and an idle CPU's wake-up IPI; after done
 * the QR pager's timer ends its halts. Every wait for the ICR is bounded. */
#ifndef ARCH_LAPIC_H
#define ARCH_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/idt.h" /* VEC_IPI, VEC_WAKE, VEC_SPURIOUS */

struct lapic_info {
    bool present;      /* CPUID.1:EDX.APIC and IA32_APIC_BASE readable */
    bool x2apic;       /* the firmware left x2APIC on: MSRs, 32-bit ids */
    uint32_t base;     /* the xAPIC page's physical address */
    uint32_t version;  /* the version register's low byte */
    uint32_t boot_id;  /* the boot CPU's APIC id */
    const char *why;   /* why not present */
};

/* The boot CPU: finds the APIC, software-enables it with every LVT masked. */
const struct lapic_info *lapic_init(void);
const struct lapic_info *lapic_info(void);
/* The same on another CPU, from its own entry (the mode is the BSP's). */
void lapic_init_this_cpu(void);
uint32_t lapic_id(void);
/* True on the boot CPU, and wherever there is no APIC (one CPU only). */
bool lapic_on_boot_cpu(void);
/* False when the previous IPI was still pending after a bounded wait. */
bool lapic_send_init(uint32_t apic_id);
bool lapic_send_sipi(uint32_t apic_id, uint32_t page);
bool lapic_send_ipi(uint32_t apic_id, uint32_t vector);
void lapic_eoi(void);
/* Arms the timer once: after `count` ticks of its clock (the bus or the core
 * crystal clock, undivided: its rate is not known here) it raises `vector`
 * and stops. For a wait that needs no precision. False without an APIC. */
bool lapic_timer_once(uint32_t count, uint32_t vector);

#endif
