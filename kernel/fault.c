#include "kernel/fault.h"

#include "arch/catch.h"
#include "arch/gdt.h"
#include "arch/mmu.h"
#include "arch/idt.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/finish.h"
#include "kernel/record.h"
#include "kernel/serial.h"
#include "kernel/wire.h"

extern char boot_stack_guard[];

static const char *running_bench;
static const char *running_what;

struct expectation {
    uint32_t mask;
    struct catch_frame frame;
    struct fault_info *info;
};
static struct expectation *armed;
static int fault_depth;
static void (*annotator)(uint32_t vector, uint32_t cr2, uint32_t esp);

void fault_set_annotator(void (*annotate)(uint32_t vector, uint32_t cr2, uint32_t esp)) { annotator = annotate; }

void fault_set_running(const char *bench, const char *what)
{
    running_bench = bench;
    running_what = what;
}

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
    uint32_t cr2 = read_cr2();
    if (++fault_depth > 1) {
        /* A fault while reporting a fault: say the least possible, stop. */
        static const char msg[] = "\r\ncleanroom: fault while reporting a fault, halting\r\n";
        serial_write(msg, sizeof msg - 1);
        finish_exit_only(RUN_FAULT);
    }
    rec_abort();
    rec_begin(REC_FAULT);
    rec_u64("vector", tf->vector);
    rec_str("name", exc_name(tf->vector));
    rec_u64("eip", tf->eip);
    rec_u64("err", tf->err);
    rec_u64("cr2", cr2);
    rec_str("bench", running_bench);
    rec_str("what", running_what);
    rec_u64("cs", tf->cs);
    rec_u64("eflags", tf->eflags);
    rec_u64("esp", esp);
    bool memory_fault = tf->vector == EXC_PF || tf->vector == EXC_DF; /* else cr2 is stale */
    if (memory_fault && cr2 >> 12 == (uint32_t)boot_stack_guard >> 12) {
        rec_str("fiber", "kernel");
        rec_str("cause", "stack overflow into the boot stack's guard page");
    } else if (annotator) {
        annotator(tf->vector, cr2, esp);
    }
    rec_end();
    console_say(VGA_RED, "FAULT: %s (vector %u) at eip 0x%x err 0x%x cr2 0x%x in %s", exc_name(tf->vector),
                tf->vector, tf->eip, tf->err, cr2, running_bench ? running_bench : "(kernel)");
    finish_run(RUN_FAULT);
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
