#include "runtime/fiber.h"

#include "arch/idt.h"
#include "kernel/fault.h"
#include "lib/record.h"

struct scheduler {
    struct fiber main;
    struct fiber *current;
    struct fiber_queue ready;
    enum switch_kind kind;
    switch_fn sw;
    uint32_t switches, next_id, alive;
    uint32_t word;             /* the switch routines' state word */
    struct fiber *leaving;     /* the fiber the last switch suspended */
};

static struct scheduler sched;

const char *fiber_state_name(enum fiber_state s)
{
    static const char *const names[] = { "new", "ready", "running", "waiting", "dead" };
    return s <= FIBER_DEAD ? names[s] : "?";
}

void fiber_annotate_fault(uint32_t vector, uint32_t cr2, uint32_t esp)
{
    (void)esp;
    const struct fiber_stack *s = vector == EXC_PF || vector == EXC_DF ? fiber_stack_guarding(cr2) : 0;
    if (s) {
        rec_str("fiber", s->owner);
        rec_str("cause", "stack overflow into the fiber's guard page");
    } else if (sched.current && sched.current != &sched.main) {
        rec_str("fiber", sched.current->name);
    }
}

void sched_init(enum switch_kind kind)
{
    sched = (struct scheduler){ 0 };
    sched.main.name = "main";
    sched.main.state = FIBER_RUNNING;
    sched.current = &sched.main;
    sched.kind = kind;
    sched.sw = switch_routine(kind);
    fault_set_annotator(fiber_annotate_fault);
}

struct fiber *fiber_current(void) { return sched.current; }
uint32_t sched_switches(void) { return sched.switches; }

void fq_push(struct fiber_queue *q, struct fiber *f)
{
    f->next = 0;
    if (q->tail)
        q->tail->next = f;
    else
        q->head = f;
    q->tail = f;
}

struct fiber *fq_pop(struct fiber_queue *q)
{
    struct fiber *f = q->head;
    if (!f)
        return 0;
    q->head = f->next;
    if (!q->head)
        q->tail = 0;
    f->next = 0;
    return f;
}

static void enqueue(struct fiber *f) { fq_push(&sched.ready, f); }

/* The next ready fiber, or main when none is. */
static struct fiber *dequeue(void)
{
    struct fiber *f = fq_pop(&sched.ready);
    return f ? f : &sched.main;
}

/* Runs in the fiber a switch resumed: records where the other one stopped. */
static inline void after_switch(void) { sched.leaving->sp = sched.word; }

static void transfer(struct fiber *to)
{
    struct fiber *from = sched.current;
    to->state = FIBER_RUNNING;
    if (to == from)
        return;
    sched.current = to;
    sched.leaving = from;
    sched.word = to->sp;
    sched.switches++;
    sched.sw(&sched.word);
    after_switch();
}

static void fiber_start(void *arg)
{
    struct fiber *f = arg;
    after_switch();
    f->fn(f->arg);
    fiber_exit();
}

/* Everything but the stack, which f->stack already holds. */
static void start_fiber(struct fiber *f, const char *name, void (*fn)(void *), void *arg)
{
    f->state = FIBER_NEW;
    f->name = name;
    f->fn = fn;
    f->arg = arg;
    f->id = ++sched.next_id;
    f->next = f->joiner = 0;
    f->sp = switch_initial_frame(sched.kind, fiber_stack_top(&f->stack), fiber_start, f);
    sched.alive++;
    enqueue(f);
}

bool fiber_create(struct fiber *f, const char *name, void (*fn)(void *), void *arg, uint32_t stack_size)
{
    /* allocated in place: the guard tracker keeps a pointer to f->stack */
    if (!fiber_stack_alloc(&f->stack, stack_size ? stack_size : FIBER_STACK_DEFAULT, name))
        return false;
    start_fiber(f, name, fn, arg);
    return true;
}

void fiber_create_on(struct fiber *f, const char *name, void (*fn)(void *), void *arg, const struct fiber_stack *stack)
{
    f->stack = *stack;
    start_fiber(f, name, fn, arg);
}

void sched_run(void)
{
    while (!fq_empty(&sched.ready)) {
        sched.main.state = FIBER_READY;
        transfer(dequeue());
    }
    sched.main.state = FIBER_RUNNING;
}

void fiber_yield(void)
{
    struct fiber *self = sched.current;
    self->state = FIBER_READY;
    enqueue(self);
    transfer(dequeue());
}

void fiber_block(void)
{
    sched.current->state = FIBER_WAITING;
    transfer(dequeue());
}

void fiber_wait_on(struct fiber_queue *q)
{
    fq_push(q, sched.current);
    fiber_block();
}

bool fiber_wake_one(struct fiber_queue *q)
{
    struct fiber *f = fq_pop(q);
    if (f)
        fiber_wake(f);
    return f != 0;
}

void fiber_wake(struct fiber *f)
{
    if (f->state != FIBER_WAITING)
        return;
    f->state = FIBER_READY;
    if (f != &sched.main)
        enqueue(f);
}

void fiber_exit(void)
{
    struct fiber *self = sched.current;
    self->state = FIBER_DEAD;
    sched.alive--;
    if (self->joiner)
        fiber_wake(self->joiner);
    transfer(dequeue());
    for (;;) /* a dead fiber is never resumed */
        ;
}

void fiber_join(struct fiber *f)
{
    if (f->state == FIBER_DEAD)
        return;
    f->joiner = sched.current;
    fiber_block();
}

void fiber_release(struct fiber *f)
{
    fiber_stack_free(&f->stack);
}
