/* The `fault` record, written in one place for the kernel's exception
 * handlers (kernel/fault.c) and the hosted build's signal handlers. */
#ifndef KERNEL_FAULT_RECORD_H
#define KERNEL_FAULT_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/mcheck.h"
#include "lib/usercode.h"

struct fault_report {
    uint32_t vector; /* CPU exception vector (arch/idt.h) */
    const char *name;
    uint32_t eip, err, cr2, cs, eflags, esp;
    const char *fiber, *cause; /* set by the caller when it knows; else the annotator is asked */
    const struct mcheck_summary *mc; /* a machine check (#MC): its registers; else NULL */
    bool on_cpu;               /* it happened on another CPU than the boot CPU (cpus=N): */
    uint32_t cpu, apic_id;     /* which (kernel/smp.h's index, and its APIC id) */
};

/* What is running, named in fault records (NULL: nothing). */
void fault_set_running(const char *bench, const char *what);
const char *fault_running_bench(void);
const char *fault_running_what(void);
/* The user's code being run, unrolled at `base` as `layout` lays it out
 * (NULL: none): a fault at an EIP inside it says where in the user's code
 * (part, copy, variant, offset), which the host maps to a source line. */
struct fault_user_code {
    const char *name;
    uint32_t base;
    struct usercode_layout layout;
};
void fault_set_user_code(const struct fault_user_code *u);
/* A primitive of the user's (runtime/userprims.h), where it lies for the
 * whole run: a fault inside it says its name and offset (part "code"). */
#define FAULT_USER_PIECES 2
void fault_add_user_piece(const char *name, uint32_t base, uint32_t len);
/* Adds fields to every fault record (e.g. the fiber runtime names the fiber
 * whose guard page cr2 hit). Called with the record open; cr2 only means
 * something for page faults and double faults. */
void fault_set_annotator(void (*annotate)(uint32_t vector, uint32_t cr2, uint32_t esp));
/* Emits the record (closing any record a fault interrupted), says it on
 * screen, and ends the run with status `fault`. */
__attribute__((noreturn)) void fault_report_and_end(const struct fault_report *r);

#endif
