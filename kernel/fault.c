#include "kernel/fault.h"

#include "arch/catch.h"
#include "arch/gdt.h"
#include "arch/mmu.h"
#include "arch/idt.h"
#include "arch/mcheck.h"
#include "arch/x86.h"
#include "kernel/finish.h"
#include "kernel/serial.h"

extern char boot_stack_guard[];

struct expectation {
    uint32_t mask;
    struct catch_frame frame;
    struct fault_info *info;
};
static struct expectation *armed;
static int fault_depth;

bool fault_expect(uint32_t vector_mask, void (*fn)(void *), void *arg, struct fault_info *info)
{
    struct expectation e = { vector_mask, { 0 }, info };
    struct expectation *outer = armed;
    armed = &e;
    int faulted = catch_call(fn, arg, &e.frame);
    armed = outer;
    if (faulted)
        clts(); /* back from the double-fault task: a task switch sets CR0.TS */
    return faulted != 0;
}

/* esp: the interrupted stack pointer. */
static void report_and_end(struct trapframe *tf, uint32_t esp)
{
    if (++fault_depth > 1) {
        /* A fault while reporting a fault: say the least possible, stop. */
        static const char msg[] = "\r\ncleanroom: fault while reporting a fault, halting\r\n";
        serial_write(msg, sizeof msg - 1);
        finish_exit_only(RUN_FAULT);
    }
    struct fault_report r = { tf->vector, exc_name(tf->vector), tf->eip, tf->err, read_cr2(), tf->cs, tf->eflags,
                              esp, 0, 0, 0 };
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

static void on_exception(struct trapframe *tf)
{
    if (armed && tf->vector < 32 && (armed->mask & FAULT_VEC(tf->vector))) {
        struct expectation *e = armed;
        if (e->info)
            *e->info = (struct fault_info){ tf->vector, tf->eip, tf->err, read_cr2() };
        armed = 0;
        catch_resume(&e->frame);
    }
    /* from ring 0 the CPU pushed no esp: the stack continued above eflags */
    report_and_end(tf, (tf->cs & 3) ? tf->user_esp : (uint32_t)&tf->user_esp);
}

/* Runs as its own task (arch/gdt.h); the interrupted context is in the main
 * TSS. Loops because each return to the main task resumes it here. */
static void double_fault_task(void)
{
    for (;;) {
        struct tss *t = gdt_main_tss();
        if (armed && (armed->mask & FAULT_VEC(EXC_DF))) {
            struct expectation *e = armed;
            armed = 0;
            if (e->info)
                *e->info = (struct fault_info){ EXC_DF, t->eip, 0, read_cr2() };
            /* resume the main task where catch_call would return 1 */
            t->eip = e->frame.eip;
            t->esp = e->frame.esp;
            t->ebx = e->frame.ebx;
            t->esi = e->frame.esi;
            t->edi = e->frame.edi;
            t->ebp = e->frame.ebp;
            t->eflags = 0x2;
            t->cr3 = read_cr3(); /* a task switch never saves CR3: give it ours */
            t->cs = SEL_KCODE;
            t->ss = t->ds = t->es = t->fs = t->gs = SEL_KDATA;
            task_return();
            continue;
        }
        struct trapframe tf = { 0 };
        tf.vector = EXC_DF;
        tf.eip = t->eip;
        tf.cs = t->cs;
        tf.eflags = t->eflags;
        report_and_end(&tf, t->esp);
    }
}

void fault_init(void)
{
    exc_set_default(on_exception);
    gdt_init_double_fault_task(double_fault_task);
    idt_use_double_fault_task();
}
