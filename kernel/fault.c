#include "kernel/fault.h"

#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/mcheck.h"
#include "arch/trap.h"
#include "arch/x86.h"
#include "kernel/finish.h"
#include "kernel/serial.h"
#include "kernel/smp.h"

extern char boot_stack_guard[];
static int fault_depth;

/* esp: the interrupted stack pointer. */
static void report_and_end(struct trapframe *tf, uint32_t esp)
{
    if (lapic_on_boot_cpu() && ++fault_depth > 1) {
        /* A fault while reporting a fault: say the least possible, stop. */
        static const char msg[] = "\r\ncleanroom: fault while reporting a fault, halting\r\n";
        serial_write(msg, sizeof msg - 1);
        finish_exit_only(RUN_FAULT);
    }
    struct fault_report r = { .vector = tf->vector, .name = exc_name(tf->vector), .eip = tf->eip, .err = tf->err,
                              .cr2 = read_cr2(), .cs = tf->cs, .eflags = tf->eflags, .esp = esp };
    if (!lapic_on_boot_cpu()) /* the boot CPU writes the record when it waits for this one */
        smp_cpu_faulted(&r);
    struct mcheck_summary mc;
    if (r.vector == EXC_MC) { /* which bank saw what: the reason the machine stopped */
        mcheck_summary(&mc);
        r.mc = &mc;
    }
    bool memory_fault = r.vector == EXC_PF || r.vector == EXC_DF; /* else cr2 is stale */
    if (memory_fault && r.cr2 >> 12 == (uint32_t)boot_stack_guard >> 12) {
        r.fiber = "kernel";
        r.cause = "stack overflow into the boot stack's guard page";
    }
    fault_report_and_end(&r);
}

void fault_init(void)
{
    trap_init(report_and_end, lapic_on_boot_cpu);
}
