#include "arch/idt.h"

#include "arch/exc_names.h"
#include "arch/mmu.h"
#include "arch/x86.h"

#define GATE_INTERRUPT_DPL0 0x8e /* present, 32-bit interrupt gate: IF stays 0 */
#define GATE_INTERRUPT_DPL3 0xee /* the same, reachable with `int` from ring 3 */
#define GATE_TASK 0x85           /* present, task gate */

struct __attribute__((packed)) gate {
    uint16_t offset_lo, selector;
    uint8_t zero, type;
    uint16_t offset_hi;
};

extern const uint32_t isr_stub_table[EXC_COUNT];
extern const char isr_syscall_stub[];
extern const char isr_ipi_stub[], isr_wake_stub[], isr_spurious_stub[];

/* Vectors 32-0x7f and the rest stay not present (an `int n` to one of them
 * raises #NP): interrupts are off, but for VEC_IPI where a benchmark opens it
 * and VEC_WAKE in an idle CPU's halt. */
static struct gate idt[IDT_ENTRIES];
static const char *names[EXC_COUNT];
static exc_handler_fn handlers[EXC_COUNT];
static void (*fallback_handler)(struct trapframe *);
static user_trap_fn user_handler;
static void (*ipi_handler)(void);
static void (*wake_handler)(void);

static void set_gate(uint32_t vector, uint32_t entry, uint8_t type)
{
    idt[vector] = (struct gate){ (uint16_t)entry, SEL_KCODE, 0, type, (uint16_t)(entry >> 16) };
}

void exc_register(uint32_t vector, const char *name, exc_handler_fn handler)
{
    if (vector >= EXC_COUNT)
        return;
    if (name)
        names[vector] = name;
    handlers[vector] = handler;
}

void idt_init(void)
{
    for (uint32_t v = 0; v < EXC_COUNT; v++) {
        set_gate(v, isr_stub_table[v], GATE_INTERRUPT_DPL0);
        exc_register(v, exc_sdm_name(v), 0);
    }
    set_gate(VEC_SYSCALL, (uint32_t)isr_syscall_stub, GATE_INTERRUPT_DPL3);
    idt_load();
}

void idt_load(void)
{
    struct table_pointer p = { sizeof idt - 1, (uint32_t)idt };
    lidt(&p);
}

void idt_set_ipi_handler(void (*fn)(void))
{
    ipi_handler = fn;
    set_gate(VEC_IPI, (uint32_t)isr_ipi_stub, GATE_INTERRUPT_DPL0);
    set_gate(VEC_SPURIOUS, (uint32_t)isr_spurious_stub, GATE_INTERRUPT_DPL0);
}

void idt_set_wake_handler(void (*fn)(void))
{
    wake_handler = fn;
    set_gate(VEC_WAKE, (uint32_t)isr_wake_stub, GATE_INTERRUPT_DPL0);
}

void idt_use_double_fault_task(void)
{
    idt[EXC_DF] = (struct gate){ 0, SEL_DF_TSS, 0, GATE_TASK, 0 };
}

void exc_set_default(void (*fallback)(struct trapframe *tf)) { fallback_handler = fallback; }
void exc_set_user_handler(user_trap_fn handler) { user_handler = handler; }

const char *exc_name(uint32_t vector)
{
    if (vector == VEC_SYSCALL)
        return "syscall";
    return vector < EXC_COUNT ? names[vector] : "unknown";
}

void exc_dispatch(struct trapframe *tf)
{
    uint32_t v = tf->vector;
    if ((tf->cs & 3) && user_handler) {
        user_handler(tf);
        return;
    }
    if (v < EXC_COUNT && handlers[v] && handlers[v](tf))
        return;
    if (v == VEC_IPI && ipi_handler) {
        ipi_handler();
        return;
    }
    if (v == VEC_WAKE && wake_handler) {
        wake_handler();
        return;
    }
    if (fallback_handler)
        fallback_handler(tf);
    halt_forever(); /* no fallback yet: nothing sane to return to */
}
