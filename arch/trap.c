#include "arch/trap.h"

#include "arch/catch.h"
#include "arch/gdt.h"
#include "arch/mmu.h"
#include "arch/x86.h"

static trap_unexpected_fn unexpected;
static bool (*expecting_cpu)(void);

struct expectation {
    uint32_t mask;
    struct catch_frame frame;
    struct trap_info *info;
};
static struct expectation *armed;

bool trap_expect(uint32_t vector_mask, void (*fn)(void *), void *arg, struct trap_info *info)
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

static void on_exception(struct trapframe *tf)
{
    if (armed && tf->vector < 32 && (armed->mask & TRAP_VEC(tf->vector)) && expecting_cpu()) {
        struct expectation *e = armed;
        if (e->info)
            *e->info = (struct trap_info){ tf->vector, tf->eip, tf->err, read_cr2() };
        armed = 0;
        catch_resume(&e->frame);
    }
    /* from ring 0 the CPU pushed no esp: the stack continued above eflags */
    unexpected(tf, (tf->cs & 3) ? tf->user_esp : (uint32_t)&tf->user_esp);
}

/* Runs as its own task (arch/gdt.h); the interrupted context is in the main
 * TSS. Loops because each return to the main task resumes it here. */
static void double_fault_task(void)
{
    for (;;) {
        struct tss *t = gdt_main_tss();
        if (armed && (armed->mask & TRAP_VEC(EXC_DF)) && expecting_cpu()) {
            struct expectation *e = armed;
            armed = 0;
            if (e->info)
                *e->info = (struct trap_info){ EXC_DF, t->eip, 0, read_cr2() };
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
        unexpected(&tf, t->esp);
    }
}

void trap_init(trap_unexpected_fn handler, bool (*on_expecting_cpu)(void))
{
    unexpected = handler;
    expecting_cpu = on_expecting_cpu;
    exc_set_default(on_exception);
    gdt_init_double_fault_task(double_fault_task);
    idt_use_double_fault_task();
}
