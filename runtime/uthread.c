#include "runtime/uthread.h"

#include "arch/catch.h"
#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/tsc.h"
#include "arch/usermode.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/fault_record.h"
#include "kernel/memory.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "runtime/frames.h"
#include "runtime/twin.h"
#include "runtime/ulib_user.h"

#define USER_RW (PTE_P | PTE_W | PTE_U)

enum ut_state { UT_FREE, UT_READY, UT_RUNNING, UT_BLOCKED, UT_DEAD };
enum ut_wait { WAIT_NONE, WAIT_WORD, WAIT_JOIN };

struct uthread {
    struct trapframe tf; /* its ring-3 state while it is not running */
    uint32_t id;
    enum ut_state state;
    struct aspace *as;
    uint32_t slot;        /* its stack slot in as */
    struct uthread *next; /* run queue or the blocked list */
    enum ut_wait wait;
    uint32_t key;         /* WAIT_WORD: the word's address; WAIT_JOIN: the thread's id */
    uint32_t status;
};

struct tqueue {
    struct uthread *head, *tail;
};

static struct {
    struct uworld_config cfg;
    struct uthread threads[UT_MAX];
    struct uthread *current;
    struct tqueue ready, blocked;
    uint32_t alive, next_id;
    uint32_t loaded_cr3, kernel_cr3;
    struct aspace *reap; /* an ended space, freed once CR3 has left it */
    struct umark marks[UT_MARKS];
    uint32_t nmarks;
    bool deadlock, running;
    struct catch_frame exit_frame;
    struct uworld_stats stats;
} W;

/* --- queues -------------------------------------------------------------- */

static void tq_push(struct tqueue *q, struct uthread *t)
{
    t->next = 0;
    if (q->tail)
        q->tail->next = t;
    else
        q->head = t;
    q->tail = t;
}

static struct uthread *tq_pop(struct tqueue *q)
{
    struct uthread *t = q->head;
    if (t) {
        q->head = t->next;
        if (!q->head)
            q->tail = 0;
        t->next = 0;
    }
    return t;
}

/* Removes t, whose predecessor is prev (NULL: the head). */
static void tq_unlink(struct tqueue *q, struct uthread *prev, struct uthread *t)
{
    if (prev)
        prev->next = t->next;
    else
        q->head = t->next;
    if (q->tail == t)
        q->tail = prev;
    t->next = 0;
}

/* --- availability and set-up --------------------------------------------- */

bool uentry_sysenter_ok(void)
{
    const struct cpu_info *c = cpu_info();
    /* The Pentium Pro reports SEP without having sysenter (SDM vol. 2, SYSENTER). */
    bool early_ppro = c->family == 6 && c->model < 3 && c->stepping < 3;
    return cpu_has(FEAT_SEP) && !early_ppro;
}

const char *uentry_name(enum uentry e) { return e == UENTRY_SYSENTER ? "sysenter" : "int80"; }

const char *uworld_unavailable(void)
{
    if (!paging_enabled())
        return "threads with address spaces need paging on (they run in the paging=on pass)";
    if (!paging_user_text_mapped())
        return "the ring-3 code pages do not lie in the first 4 MiB";
    if (memory_top() > U_WINDOW)
        return "RAM reaches the threads' window at 0xf0000000";
    return 0;
}

bool uworld_init(const struct uworld_config *cfg)
{
    W = (__typeof__(W)){ .cfg = *cfg };
    if (W.cfg.heap_pages > U_HEAP_MAX_PAGES)
        W.cfg.heap_pages = U_HEAP_MAX_PAGES;
    if (W.cfg.entry == UENTRY_SYSENTER && !uentry_sysenter_ok())
        W.cfg.entry = UENTRY_INT80;
    if (!frames_init(cfg->pool_frames ? cfg->pool_frames : UT_POOL_DEFAULT) ||
        !shared_region_init(U_SYNC_PAGES + U_GLOBALS_PAGES + W.cfg.heap_pages))
        return false;
    twin_reset();
    volatile struct ucontrol *c = uworld_shared(U_SYNC);
    c->use_sysenter = W.cfg.entry == UENTRY_SYSENTER;
    c->commit_mode = W.cfg.commit_mode;
    c->heap_pages = W.cfg.heap_pages;
    if (uentry_sysenter_ok()) {
        wrmsr(MSR_SYSENTER_CS, SEL_KCODE);
        wrmsr(MSR_SYSENTER_ESP, gdt_kernel_stack_top());
        wrmsr(MSR_SYSENTER_EIP, (uint32_t)sysenter_entry);
    }
    return true;
}

struct aspace *uworld_space(void) { return aspace_new(W.cfg.commit_mode); }

static struct uthread *thread_new(struct aspace *as, uint32_t slot)
{
    for (uint32_t i = 0; i < UT_MAX; i++) {
        struct uthread *t = &W.threads[i];
        if (t->state != UT_FREE)
            continue;
        *t = (struct uthread){ .id = ++W.next_id, .state = UT_READY, .as = as, .slot = slot };
        struct uself *self = aspace_self_block(as, slot);
        if (self)
            *self = (struct uself){ t->id, (t->id - 1) % UT_MAX, slot, 0 };
        as->users++;
        W.alive++;
        tq_push(&W.ready, t);
        return t;
    }
    return 0;
}

static bool threads_full(void)
{
    for (uint32_t i = 0; i < UT_MAX; i++)
        if (W.threads[i].state == UT_FREE)
            return false;
    return true;
}

/* A fresh ring-3 frame entering uthread_entry(fn, arg) on the slot's stack. */
static struct trapframe entry_frame(struct aspace *as, uint32_t slot, void (*fn)(void *), void *arg)
{
    uint32_t top = aspace_stack_top(slot) - sizeof(struct uself);
    uint32_t esp = top - 16 - 4; /* cdecl entry: esp + 4 is 16-byte aligned */
    uint32_t *k = (uint32_t *)((uint32_t)aspace_self_block(as, slot) - (top - esp));
    k[0] = 0; /* uthread_entry never returns */
    k[1] = (uint32_t)fn;
    k[2] = (uint32_t)arg;
    struct trapframe tf = { 0 };
    tf.gs = tf.fs = tf.es = tf.ds = SEL_UDATA;
    tf.eip = (uint32_t)uthread_entry;
    tf.cs = SEL_UCODE;
    tf.eflags = EFLAGS_USER;
    tf.user_esp = esp;
    tf.user_ss = SEL_UDATA;
    return tf;
}

uint32_t uworld_spawn(struct aspace *as, void (*fn)(void *), void *arg)
{
    if (threads_full())
        return 0;
    int32_t slot = aspace_stack_new(as);
    if (slot < 0)
        return 0;
    struct trapframe tf = entry_frame(as, (uint32_t)slot, fn, arg);
    struct uthread *t = thread_new(as, (uint32_t)slot);
    t->tf = tf;
    return t->id;
}

/* --- switching ------------------------------------------------------------- */

static void load_cr3(uint32_t cr3)
{
    if (W.loaded_cr3 == cr3)
        return;
    cr3_load(cr3);
    W.loaded_cr3 = cr3;
    W.stats.cr3_loads++;
}

static void reap(void)
{
    struct aspace *as = W.reap;
    if (!as)
        return;
    W.reap = 0;
    twin_discard(as);
    aspace_free(as);
}

/* The world is over (no thread left) or stuck (none ready, some blocked). */
static __attribute__((noreturn)) void world_over(void)
{
    W.deadlock = W.alive > 0;
    catch_resume(&W.exit_frame);
}

/* The current thread is no longer running (its frame already saved):
 * resume the next ready one through *tf. */
static void dispatch_next(struct trapframe *tf)
{
    struct uthread *n = tq_pop(&W.ready);
    if (!n)
        world_over();
    *tf = n->tf;
    n->state = UT_RUNNING;
    W.current = n;
    W.stats.switches++;
    load_cr3(aspace_cr3(n->as));
    reap();
}

static void block(struct trapframe *tf, enum ut_wait wait, uint32_t key)
{
    struct uthread *cur = W.current;
    cur->wait = wait;
    cur->key = key;
    cur->state = UT_BLOCKED;
    cur->tf = *tf;
    tq_push(&W.blocked, cur);
    dispatch_next(tf);
}

static void make_ready(struct uthread *t, uint32_t result)
{
    t->tf.eax = result;
    t->wait = WAIT_NONE;
    t->state = UT_READY;
    tq_push(&W.ready, t);
}

/* Wakes up to n threads blocked on (wait, key), in the order they blocked. */
static uint32_t wake(enum ut_wait wait, uint32_t key, uint32_t n, uint32_t result)
{
    uint32_t woken = 0;
    struct uthread *prev = 0, *t = W.blocked.head;
    while (t && woken < n) {
        struct uthread *next = t->next;
        if (t->wait == wait && t->key == key) {
            tq_unlink(&W.blocked, prev, t);
            make_ready(t, result);
            woken++;
        } else {
            prev = t;
        }
        t = next;
    }
    return woken;
}

static void yield(struct trapframe *tf)
{
    if (!W.ready.head)
        return; /* nobody else to run */
    struct uthread *cur = W.current;
    cur->state = UT_READY;
    cur->tf = *tf;
    tq_push(&W.ready, cur);
    dispatch_next(tf);
}

/* --- thread life ------------------------------------------------------------ */

static void sync_point(void)
{
    if (W.cfg.commit_mode && W.current->as->ntwins) {
        twin_commit(W.current->as, 0);
        W.stats.commits++;
    }
}

static uint32_t create(struct trapframe *tf, uint32_t fn, uint32_t arg)
{
    struct uthread *cur = W.current, *t;
    if (threads_full())
        return USYS_ERROR;
    if (!W.cfg.isolated) { /* clone: the parent's space, a stack slot of its own */
        int32_t slot = aspace_stack_new(cur->as);
        if (slot < 0)
            return USYS_ERROR;
        struct trapframe child = entry_frame(cur->as, (uint32_t)slot, (void (*)(void *))fn, (void *)arg);
        t = thread_new(cur->as, (uint32_t)slot);
        t->tf = child;
    } else { /* fork: a new space, the parent's stack copied at the same address */
        struct aspace *as = uworld_space();
        if (!as)
            return USYS_ERROR;
        if (!aspace_stack_map(as, cur->slot)) {
            aspace_free(as);
            return USYS_ERROR;
        }
        aspace_stack_copy(as, cur->slot, cur->as, cur->slot);
        t = thread_new(as, cur->slot);
        t->tf = *tf;
        t->tf.eax = 0; /* the child sees 0, as after fork() */
    }
    W.stats.creates++;
    return t->id;
}

static struct uthread *find(uint32_t id)
{
    for (uint32_t i = 0; i < UT_MAX; i++)
        if (W.threads[i].id == id && W.threads[i].state != UT_FREE)
            return &W.threads[i];
    return 0;
}

/* The current thread ends with status; the next one runs through *tf. */
static void end_current(struct trapframe *tf, uint32_t status)
{
    struct uthread *cur = W.current;
    cur->status = status;
    cur->state = wake(WAIT_JOIN, cur->id, 1, status) ? UT_FREE : UT_DEAD;
    W.alive--;
    W.stats.exits++;
    struct aspace *as = cur->as;
    if (--as->users == 0)
        W.reap = as; /* freed once CR3 has moved on */
    else
        aspace_stack_free(as, cur->slot);
    W.current = 0;
    dispatch_next(tf);
}

static void join(struct trapframe *tf, uint32_t id)
{
    struct uthread *t = find(id);
    if (!t || t == W.current) {
        tf->eax = USYS_ERROR;
        return;
    }
    if (t->state == UT_DEAD) {
        tf->eax = t->status;
        t->state = UT_FREE;
        return;
    }
    block(tf, WAIT_JOIN, id);
}

/* --- synchronisation words ---------------------------------------------------- */

/* The word at user address va, if it is one a thread may wait on: in the
 * shared region (in commit mode, the sync page: the only one not isolated). */
static volatile uint32_t *sync_word(uint32_t va)
{
    int32_t idx = shared_region_index(va);
    if (idx < 0 || (va & 3) || (W.cfg.commit_mode && idx >= (int32_t)U_SYNC_PAGES))
        return 0;
    return (volatile uint32_t *)va; /* mapped in every space of the world */
}

static void wait_word(struct trapframe *tf, uint32_t va, uint32_t value)
{
    volatile uint32_t *w = sync_word(va);
    if (!w) {
        tf->eax = USYS_ERROR;
        return;
    }
    if (*w != value) {
        tf->eax = 1;
        return;
    }
    tf->eax = 0;
    block(tf, WAIT_WORD, va);
}

static uint32_t bump_and_wake(uint32_t va, uint32_t n)
{
    volatile uint32_t *w = sync_word(va);
    if (!w)
        return USYS_ERROR;
    *w = *w + 1;
    return wake(WAIT_WORD, va, n, 0);
}

static void barrier_wait(struct trapframe *tf, uint32_t va)
{
    volatile struct ubarrier *b = (volatile struct ubarrier *)sync_word(va);
    if (!b || !sync_word(va + 8)) {
        tf->eax = USYS_ERROR;
        return;
    }
    if (++b->arrived < b->count) {
        tf->eax = 0;
        block(tf, WAIT_WORD, va);
        return;
    }
    b->arrived = 0;
    b->generation++;
    wake(WAIT_WORD, va, UT_MAX, 0);
    tf->eax = 1;
}

/* --- memory ------------------------------------------------------------------- */

static bool private_range(uint32_t va, uint32_t pages)
{
    return !(va & (U_PAGE - 1)) && va >= U_PRIVATE && pages <= (U_PRIVATE_END - va) / U_PAGE;
}

static uint32_t map(uint32_t va, uint32_t pages, bool unmap)
{
    struct aspace *as = W.current->as;
    if (!private_range(va, pages))
        return USYS_ERROR;
    aspace_lock(as);
    bool ok = true;
    if (unmap)
        aspace_unmap(as, va, pages);
    else
        ok = aspace_map_new(as, va, pages, USER_RW);
    aspace_unlock(as);
    return ok ? 0 : USYS_ERROR;
}

static void mark(void)
{
    uint64_t t = tsc_begin();
    if (W.nmarks < UT_MARKS)
        W.marks[W.nmarks++] = (struct umark){ t, frames_in_use(), W.current->id };
}

/* --- traps from ring 3 -------------------------------------------------------------- */

static void system_call(struct trapframe *tf)
{
    uint32_t a = tf->ebx, b = tf->esi;
    W.stats.syscalls++;
    switch (tf->eax) {
    case USYS_NULL: tf->eax = USYS_NULL_MAGIC; break;
    case USYS_MARK: mark(); tf->eax = 0; break;
    case USYS_YIELD: tf->eax = 0; yield(tf); break;
    case USYS_CREATE: sync_point(); tf->eax = create(tf, a, b); break;
    case USYS_EXIT: sync_point(); end_current(tf, a); break;
    case USYS_JOIN: sync_point(); join(tf, a); break;
    case USYS_FUTEX_WAIT:
    case USYS_COND_WAIT: wait_word(tf, a, b); break;
    case USYS_FUTEX_WAKE: tf->eax = sync_word(a) ? wake(WAIT_WORD, a, b, 0) : USYS_ERROR; break;
    case USYS_COND_SIGNAL: sync_point(); tf->eax = bump_and_wake(a, 1); break;
    case USYS_COND_BROADCAST: sync_point(); tf->eax = bump_and_wake(a, UT_MAX); break;
    case USYS_BARRIER_WAIT: sync_point(); barrier_wait(tf, a); break;
    case USYS_MAP: tf->eax = map(a, b, false); break;
    case USYS_UNMAP: tf->eax = map(a, b, true); break;
    case USYS_COMMIT: sync_point(); tf->eax = 0; break;
    default: tf->eax = USYS_ERROR; break;
    }
}

/* A page fault the world's policies fix: commit mode's first write to a
 * shared page, a demand-zero page, a fix-on-write page. */
static bool fix_page_fault(struct trapframe *tf, uint32_t cr2)
{
    struct aspace *as = W.current->as;
    bool present = tf->err & PF_PRESENT, write = tf->err & PF_WRITE;
    if (present && write && W.cfg.commit_mode && twin_fault(as, cr2)) {
        W.stats.twins++;
        return true;
    }
    const struct uregion *r = aspace_region_at(as, cr2);
    if (r && r->kind == REGION_DEMAND && !present) {
        aspace_lock(as);
        bool ok = aspace_map_new(as, cr2 & PTE_ADDR_MASK, 1, USER_RW);
        aspace_unlock(as);
        W.stats.demand_faults += ok;
        return ok;
    }
    uint32_t *pte = r && r->kind == REGION_FIX_ON_WRITE && present && write ? aspace_pte(as, cr2) : 0;
    if (pte) {
        *pte |= PTE_W;
        tlb_invalidate(cr2);
        W.stats.wp_fixes++;
        return true;
    }
    return false;
}

static const char *fault_cause(const struct trapframe *tf, uint32_t cr2)
{
    if (tf->vector == EXC_GP)
        return "a privileged instruction or a bad segment in ring 3";
    if (tf->vector != EXC_PF)
        return "an exception in ring 3";
    if (cr2 < U_WINDOW)
        return "kernel memory (supervisor pages) touched from ring 3";
    if (cr2 >= U_STACK_REGION && !(tf->err & PF_PRESENT))
        return "below its stack: the guard page (stack overflow)";
    if ((tf->err & (PF_PRESENT | PF_WRITE)) == (PF_PRESENT | PF_WRITE))
        return "a write to a read-only page";
    return (tf->err & PF_PRESENT) ? "a page it may not touch" : "an unmapped page";
}

/* Stops the current thread: a record, its changes dropped, the others run on. */
static void thread_fault(struct trapframe *tf)
{
    struct uthread *cur = W.current;
    uint32_t cr2 = tf->vector == EXC_PF ? read_cr2() : 0;
    const char *cause = fault_cause(tf, cr2);
    rec_begin(REC_THREAD_FAULT);
    rec_u64("vector", tf->vector);
    rec_str("name", exc_name(tf->vector));
    rec_u64("eip", tf->eip);
    rec_u64("err", tf->err);
    rec_u64("cr2", cr2);
    rec_u64("thread", cur->id);
    rec_str("bench", fault_running_bench());
    rec_str("what", fault_running_what());
    rec_str("cause", cause);
    rec_end();
    console_say(VGA_YELLOW, "  thread %u stopped: %s at eip 0x%x cr2 0x%x (%s)", cur->id, exc_name(tf->vector),
                tf->eip, cr2, cause);
    W.stats.thread_faults++;
    twin_discard(cur->as); /* an unfinished transaction is not published */
    end_current(tf, UTHREAD_FAULTED);
}

static void user_trap(struct trapframe *tf)
{
    if (tf->vector == VEC_SYSCALL) {
        system_call(tf);
        return;
    }
    if (tf->vector == EXC_PF && fix_page_fault(tf, read_cr2()))
        return;
    thread_fault(tf);
}

/* --- running ------------------------------------------------------------------------ */

static void world_enter(void *unused)
{
    (void)unused;
    struct uthread *t = tq_pop(&W.ready);
    if (!t)
        return;
    struct trapframe *frame = (struct trapframe *)(gdt_kernel_stack_top() - sizeof(struct trapframe));
    *frame = t->tf;
    t->state = UT_RUNNING;
    W.current = t;
    load_cr3(aspace_cr3(t->as));
    user_enter(frame);
}

bool uworld_run(void)
{
    bool global_was = paging_global_on();
    W.kernel_cr3 = W.loaded_cr3 = read_cr3();
    if (cpu_has(FEAT_PGE))
        paging_set_global(W.cfg.global_pages);
    exc_set_user_handler(user_trap);
    W.deadlock = false;
    W.running = true;
    catch_call(world_enter, 0, &W.exit_frame);
    W.running = false;
    load_segments(SEL_KCODE, SEL_KDATA);
    cr3_load(W.kernel_cr3);
    W.loaded_cr3 = W.kernel_cr3;
    reap();
    exc_set_user_handler(0);
    if (cpu_has(FEAT_PGE))
        paging_set_global(global_was);
    if (W.deadlock) {
        rec_begin(REC_ERROR);
        rec_str("code", "deadlock");
        rec_str("msg", "ring-3 threads all blocked: the world was stopped");
        rec_str("bench", fault_running_bench());
        rec_str("what", fault_running_what());
        rec_u64("blocked", W.alive);
        rec_end();
    }
    return !W.deadlock;
}

void uworld_end(void)
{
    for (uint32_t i = 0; i < UT_MAX; i++) {
        struct uthread *t = &W.threads[i];
        if (t->state == UT_FREE || t->state == UT_DEAD)
            continue;
        t->state = UT_DEAD;
        if (--t->as->users == 0) {
            twin_discard(t->as);
            aspace_free(t->as);
        }
    }
    W.ready = W.blocked = (struct tqueue){ 0, 0 };
    W.alive = 0;
    shared_region_free();
    W.stats.frames_leaked = frames_in_use();
}

const struct uworld_stats *uworld_stats(void) { return &W.stats; }

uint32_t uworld_marks(const struct umark **marks)
{
    *marks = W.marks;
    return W.nmarks;
}

uint32_t uworld_status(uint32_t tid)
{
    for (uint32_t i = 0; i < UT_MAX; i++)
        if (W.threads[i].id == tid)
            return W.threads[i].status;
    return USYS_ERROR;
}
