#include "kernel/fault.h"

#include "arch/catch.h"
#include "arch/idt.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/finish.h"
#include "kernel/record.h"
#include "kernel/serial.h"
#include "kernel/wire.h"

static const char *running_bench;
static const char *running_what;

struct expectation {
    uint32_t mask;
    struct catch_frame frame;
    struct fault_info *info;
};
static struct expectation *armed;
static int fault_depth;

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
    return faulted != 0;
}

static void report_and_end(struct trapframe *tf)
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
    report_and_end(tf);
}

void fault_init(void) { exc_set_default(on_exception); }
