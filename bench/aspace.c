/* bench aspace: what a thread that owns its address space costs, next to a
 * fiber in the kernel's one address space (PATHREADS, Zhang & Chen;
 * Sheriff and Dthreads, Liu 2014), each cost on its own:
 *
 *   switch_*        a switch: fibers through the run queue; ring-3 threads by
 *                   the yield system call, in two spaces (CR3 reloaded) or
 *                   one; kernel pages global (pge=on) or not
 *   tlb_refill      CR3 reload + touching P pages, minus touching them warm;
 *                   the pages 4 KiB or one 4 MiB page (params.region)
 *   invlpg, cr3_reload  the two ways to drop translations
 *   pf_roundtrip    write-protect fault, handler makes the page writable,
 *                   invlpg, return: from ring 0 and from ring 3
 *   syscall_*       a null system call by int 0x80 and by sysenter
 *   create_*        create + exit + join: fiber vs fork-like thread (a new
 *                   directory, the stack copied)
 *   twin, commit*   commit mode: the first write's fault + working copy +
 *                   twin; the commit by word diff with dirty% of the words
 *                   changed, or by the single-writer page copy
 *   mutex_*         uncontended (ring-3 fast path, no system call) and
 *                   contended (blocking through the kernel)
 *   malloc_*        IAmalloc's lock-free sub-heap vs one heap behind a lock
 *   map_unmap, demand_fault  the address-space lock model: two threads in
 *                   one space share a lock, in two spaces they do not
 *   workset_threads Klimiankou's two workers as threads in two spaces (the
 *                   quick suite: four sizes; the sweep with sizes= or paper)
 *
 * Ring-3 cases are timed by marks the leading thread makes (bench/aspace_user.h);
 * ring-0 cases by the TSC around the loop. Emulators model no TLB: there a
 * CR3 reload or a TLB refill costs instructions only. */
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/paging.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/aspace_user.h"
#include "bench/registry.h"
#include "bench/sweep.h"
#include "kernel/memory.h"
#include "lib/defaults.h"
#include "runtime/fiber.h"
#include "runtime/stackpool.h"
#include "runtime/sync.h"
#include "runtime/twin.h"
#include "runtime/uthread.h"

#define COMMIT_PAGES 16
#define FAULT_PAGES 64
#define MAP_PAGES 4
#define HEAP_PAGES 64
#define USER_RW (PTE_P | PTE_W | PTE_U)

static const char *const onoff[2] = { "off", "on" };

static void add_num(struct bench_case *c, const char *k, uint64_t v)
{
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM(k, v);
}

static void add_str(struct bench_case *c, const char *k, const char *v)
{
    c->params[c->nparams++] = (struct bench_param)PARAM_STR(k, v);
}

/* --- ring-3 cases: one world per run ------------------------------------- */

struct tcase {
    struct uworld_config cfg;
    void (*body)(void *);
    uint32_t threads;
    bool one_space;            /* every thread in the first one's address space */
    struct ab_thread t[2];
    /* per thread, after its space exists: map what it needs (NULL: nothing) */
    bool (*prepare)(struct tcase *c, struct aspace *as, uint32_t thread);
    uint32_t buf[2], buf_bytes; /* workset: each thread's buffer, and its bytes */
    bool large;                 /* map the buffers with 4 MiB pages */
    /* from the last run */
    struct aspace *spaces[2];
    bool failed;
    uint32_t locks, lock_max;
};

static struct tcase tc;

static struct uworld_config world_config(bool isolated, bool commit, bool pge, enum uentry entry)
{
    return (struct uworld_config){ .heap_pages = HEAP_PAGES, .commit_mode = commit, .isolated = isolated,
                                   .entry = entry, .global_pages = pge, .pool_frames = 0 };
}

static bool setup(struct tcase *c)
{
    struct ab_globals *g = uworld_shared(U_GLOBALS);
    struct ab_sync *s = uworld_shared(U_SYNC_AREA);
    s->m.state = 0;
    s->b = (struct ubarrier){ c->threads, 0, 0 };
    for (uint32_t i = 0; i < c->threads; i++) {
        struct aspace *as = i > 0 && c->one_space ? c->spaces[0] : uworld_space();
        c->spaces[i] = as;
        g->t[i] = c->t[i];
        if (!as || (c->prepare && !c->prepare(c, as, i)) || !uworld_spawn(as, c->body, &AB->t[i]))
            return false;
    }
    c->locks = c->one_space ? 1 : c->threads;
    return true;
}

/* The time between the leader's last two marks, minus one mark's own
 * round trip (signed: a body inside the noise of a mark is negative, as
 * measured); false when the leader did not make its three marks. */
static bool marked_cycles(int64_t *cycles)
{
    const struct umark *m;
    uint32_t n = uworld_marks(&m);
    if (n < 3)
        return false;
    uint64_t mark = m[1].tsc - m[0].tsc, body = m[n - 1].tsc - m[1].tsc;
    *cycles = (int64_t)body - (int64_t)mark;
    return true;
}

/* Acquisitions of the busiest address-space lock (a space's record
 * outlives it until the next world). */
static uint32_t busiest_lock(const struct tcase *c)
{
    uint32_t most = 0;
    for (uint32_t i = 0; i < c->threads; i++)
        if (c->spaces[i]->lock_taken > most)
            most = c->spaces[i]->lock_taken;
    return most;
}

static int64_t run_world(void *arg)
{
    struct tcase *c = arg;
    struct region_mark mark;
    memory_mark(&mark);
    int64_t cycles = 0;
    c->failed = !uworld_init(&c->cfg) || !setup(c) || !uworld_run() || !marked_cycles(&cycles);
    if (!c->failed)
        c->lock_max = busiest_lock(c);
    uworld_end();
    memory_release(&mark);
    return cycles;
}

/* A probe run first: a world that cannot be made or deadlocks is a skip. */
static void measure_world(struct bench_ctx *ctx, struct bench_case *c, struct tcase *t)
{
    run_world(t);
    if (t->failed) {
        bench_skip(ctx, c->name, "the threads' world could not be made (memory), deadlocked or lost its leader");
        return;
    }
    bench_measure(ctx, c, run_world, t);
}

static void thread_case(struct tcase *t, void (*body)(void *), uint32_t threads, uint32_t reps)
{
    *t = (struct tcase){ .cfg = t->cfg, .body = body, .threads = threads };
    for (uint32_t i = 0; i < threads; i++)
        t->t[i] = (struct ab_thread){ .lead = i == 0, .reps = reps };
}

/* --- switches -------------------------------------------------------------- */

static uint32_t fiber_reps;
static struct fiber fibers[2];
static struct fmutex fiber_lock;

static void yielder(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < fiber_reps; i++)
        fiber_yield();
}

static int64_t fibers_run(void (*fn)(void *), uint32_t n, uint64_t *switches)
{
    struct fiber_spec specs[2];
    for (uint32_t i = 0; i < n; i++)
        specs[i] = (struct fiber_spec){ &fibers[i], "aspace", fn, 0, 0 };
    fmutex_init(&fiber_lock);
    return bench_time_fibers(specs, n, switches);
}

static int64_t run_switch_fiber(void *arg)
{
    (void)arg;
    return fibers_run(yielder, 2, 0);
}

static void switches(struct bench_ctx *ctx, uint32_t reps, enum uentry entry)
{
    fiber_reps = reps;
    uint64_t sw = 0;
    fibers_run(yielder, 2, &sw);
    struct bench_case c = { .name = "switch_fiber", .per = sw };
    add_num(&c, "reps", reps);
    bench_measure(ctx, &c, run_switch_fiber, 0);

    static const char *const names[2] = { "switch_thread", "switch_thread_samecr3" };
    for (int same = 0; same < 2; same++) {
        for (int pge = 1; pge >= 0; pge--) {
            if (pge && !paging_global_pages()) {
                bench_skip(ctx, names[same], "pge=on: this CPU has no global pages (PGE)");
                continue;
            }
            tc.cfg = world_config(true, false, pge, entry);
            thread_case(&tc, ab_yield, 2, reps);
            tc.one_space = same;
            struct bench_case t = { .name = names[same], .per = 2 * (uint64_t)reps };
            add_num(&t, "reps", reps);
            add_str(&t, "pge", onoff[pge]);
            add_str(&t, "entry", uentry_name(tc.cfg.entry));
            measure_world(ctx, &t, &tc);
        }
    }
}

/* --- TLB ------------------------------------------------------------------ */

struct tlb {
    struct aspace *as;
    uint32_t pages, reps;
};

/* One read per page, each at another line so the caches spread them. */
static void touch_pages(uint32_t pages)
{
    for (uint32_t i = 0; i < pages; i++)
        (void)*(volatile uint32_t *)(U_PRIVATE + i * U_PAGE + (i & 63) * 64);
}

/* Cold minus warm, signed: a refill inside the noise is negative, as measured. */
static int64_t run_tlb(void *arg)
{
    const struct tlb *t = arg;
    uint32_t kernel = read_cr3(), cr3 = aspace_cr3(t->as);
    cr3_load(cr3);
    touch_pages(t->pages);
    uint64_t t0 = tsc_begin();
    for (uint32_t r = 0; r < t->reps; r++) {
        cr3_load(cr3);
        touch_pages(t->pages);
    }
    uint64_t t1 = tsc_end();
    for (uint32_t r = 0; r < t->reps; r++)
        touch_pages(t->pages);
    uint64_t t2 = tsc_end();
    cr3_load(kernel);
    uint64_t cold = t1 - t0, warm = t2 - t1;
    return (int64_t)cold - (int64_t)warm;
}

static int64_t run_invlpg(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, va = (uint32_t)arg;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        tlb_invalidate(va);
    return (int64_t)(tsc_end() - t0);
}

static int64_t run_cr3_reload(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, cr3 = read_cr3();
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        cr3_load(cr3);
    return (int64_t)(tsc_end() - t0);
}

/* The region at U_PRIVATE: 512 small pages, or one 4 MiB page. */
static bool map_tlb_region(struct aspace *as, bool large)
{
    uint32_t bytes = large ? LARGE_PAGE_SIZE : 512 * U_PAGE;
    uint32_t pa = (uint32_t)memory_alloc(bytes, large ? LARGE_PAGE_SIZE : U_PAGE);
    if (!pa)
        return false;
    if (large)
        return aspace_map_large(as, U_PRIVATE, pa, USER_RW);
    for (uint32_t i = 0; i < 512; i++)
        if (!aspace_map(as, U_PRIVATE + i * U_PAGE, pa + i * U_PAGE, USER_RW))
            return false;
    return true;
}

static void tlb(struct bench_ctx *ctx)
{
    static const uint32_t counts[] = { 1, 8, 64, 512 };
    static const char *const sizes[2] = { "4k", "4m" };
    bool global_was = paging_global_on();
    for (int large = 0; large < 2; large++) {
        struct region_mark mark;
        memory_mark(&mark);
        struct uworld_config cfg = world_config(true, false, true, UENTRY_INT80);
        struct tlb t = { 0, 0, CR_DEF_ASPACE_TLB_REPS };
        const char *why = large && !paging_supports(PAGESIZE_4M) ? "4 MiB pages need PSE" : 0;
        if (!why && (!uworld_init(&cfg) || !(t.as = uworld_space()) || !map_tlb_region(t.as, large)))
            why = "no memory for the region";
        for (int pge = 1; pge >= 0; pge--) {
            for (uint32_t k = 0; k < 4; k++) {
                const char *skip = why ? why : pge && !paging_global_pages() ? "pge=on: no PGE" : 0;
                if (skip) {
                    bench_skip(ctx, "tlb_refill", skip);
                    continue;
                }
                paging_set_global(pge);
                t.pages = counts[k];
                struct bench_case c = { .name = "tlb_refill", .per = CR_DEF_ASPACE_TLB_REPS };
                add_num(&c, "pages", counts[k]);
                add_str(&c, "region", sizes[large]); /* the touched region's pages (params.pagesize: the pass's) */
                add_str(&c, "pge", onoff[pge]);
                add_num(&c, "reps", CR_DEF_ASPACE_TLB_REPS);
                bench_measure(ctx, &c, run_tlb, &t);
            }
        }
        paging_set_global(global_was);
        uworld_end();
        memory_release(&mark);
    }
}

static void flushes(struct bench_ctx *ctx, uint32_t reps)
{
    static uint32_t reps_word;
    reps_word = reps;
    bool global_was = paging_global_on();
    struct bench_case c = { .name = "invlpg", .per = reps };
    add_num(&c, "reps", reps);
    bench_measure(ctx, &c, run_invlpg, &reps_word);
    for (int pge = 1; pge >= 0; pge--) {
        if (pge && !paging_global_pages()) {
            bench_skip(ctx, "cr3_reload", "pge=on: no PGE");
            continue;
        }
        paging_set_global(pge);
        struct bench_case r = { .name = "cr3_reload", .per = reps };
        add_num(&r, "reps", reps);
        add_str(&r, "pge", onoff[pge]);
        bench_measure(ctx, &r, run_cr3_reload, &reps_word);
    }
    paging_set_global(global_was);
}

/* --- page faults ------------------------------------------------------------ */

static bool map_readonly(struct tcase *c, struct aspace *as, uint32_t thread)
{
    (void)thread;
    if (!aspace_map_new(as, U_PRIVATE, c->t[0].pages, PTE_P | PTE_U))
        return false;
    aspace_add_region(as, REGION_FIX_ON_WRITE, U_PRIVATE, U_PRIVATE + c->t[0].pages * U_PAGE);
    return true;
}

static struct aspace *pf_space;

/* Ring 0's handler: the same fix the threads' handler makes. */
static bool fix_write(struct trapframe *tf)
{
    uint32_t cr2 = read_cr2();
    if (cr2 < U_PRIVATE || cr2 >= U_PRIVATE + FAULT_PAGES * U_PAGE || (tf->err & PF_WRITE) == 0)
        return false;
    *aspace_pte(pf_space, cr2) |= PTE_W;
    tlb_invalidate(cr2);
    return true;
}

static int64_t run_pf_ring0(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < FAULT_PAGES; i++) {
        *aspace_pte(pf_space, U_PRIVATE + i * U_PAGE) &= ~PTE_W;
        tlb_invalidate(U_PRIVATE + i * U_PAGE);
    }
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < FAULT_PAGES; i++)
        *(volatile uint32_t *)(U_PRIVATE + i * U_PAGE) = i;
    return (int64_t)(tsc_end() - t0);
}

static void faults(struct bench_ctx *ctx, enum uentry entry)
{
    struct region_mark mark;
    memory_mark(&mark);
    struct uworld_config cfg = world_config(true, false, true, entry);
    uint32_t kernel = read_cr3();
    struct bench_case c = { .name = "pf_roundtrip", .per = FAULT_PAGES };
    add_num(&c, "ring", 0);
    add_num(&c, "pages", FAULT_PAGES);
    if (uworld_init(&cfg) && (pf_space = uworld_space()) &&
        aspace_map_new(pf_space, U_PRIVATE, FAULT_PAGES, USER_RW)) {
        cr3_load(aspace_cr3(pf_space));
        exc_register(EXC_PF, 0, fix_write);
        bench_measure(ctx, &c, run_pf_ring0, 0);
        exc_register(EXC_PF, 0, 0);
        cr3_load(kernel);
    } else {
        bench_skip(ctx, "pf_roundtrip", "no memory for the pages");
    }
    uworld_end();
    memory_release(&mark);

    tc.cfg = cfg;
    thread_case(&tc, ab_touch, 1, 0);
    tc.t[0].va = U_PRIVATE;
    tc.t[0].pages = FAULT_PAGES;
    tc.prepare = map_readonly;
    struct bench_case u = { .name = "pf_roundtrip", .per = FAULT_PAGES };
    add_num(&u, "ring", 3);
    add_num(&u, "pages", FAULT_PAGES);
    measure_world(ctx, &u, &tc);
}

/* --- system calls, create ---------------------------------------------------- */

static void syscalls(struct bench_ctx *ctx, uint32_t reps)
{
    static const char *const names[2] = { "syscall_int80", "syscall_sysenter" };
    for (int k = 0; k < 2; k++) {
        if (k && !uentry_sysenter_ok()) {
            bench_skip(ctx, names[k], "this CPU has no sysenter (SEP)");
            continue;
        }
        tc.cfg = world_config(true, false, true, (enum uentry)k);
        thread_case(&tc, ab_null, 1, reps);
        tc.t[0].kind = (uint32_t)k;
        struct bench_case c = { .name = names[k], .per = reps };
        add_num(&c, "reps", reps);
        measure_world(ctx, &c, &tc);
    }
}

static struct {
    struct stackpool pool;
    struct fiber parent, child;
    uint32_t reps;
} life;

static void child(void *arg) { (void)arg; }

static void parent(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < life.reps; i++) {
        struct fiber_stack s;
        if (!stackpool_take(&life.pool, &s))
            return;
        fiber_create_on(&life.child, "child", child, 0, &s);
        fiber_join(&life.child);
        stackpool_give(&life.pool, &s);
    }
}

static int64_t run_create_fiber(void *arg)
{
    (void)arg;
    const struct fiber_spec spec = { &life.parent, "parent", parent, 0, 0 };
    return bench_time_fibers(&spec, 1, 0);
}

static void creates(struct bench_ctx *ctx, uint32_t reps, enum uentry entry)
{
    struct region_mark mark;
    memory_mark(&mark);
    life.reps = reps;
    struct bench_case c = { .name = "create_fiber", .per = reps };
    add_num(&c, "reps", reps);
    if (stackpool_init(&life.pool, 1, FIBER_STACK_DEFAULT))
        bench_measure(ctx, &c, run_create_fiber, 0);
    else
        bench_skip(ctx, "create_fiber", "no memory for a stack");
    memory_release(&mark);

    tc.cfg = world_config(true, false, true, entry);
    thread_case(&tc, ab_create, 1, reps);
    struct bench_case t = { .name = "create_thread", .per = reps };
    add_num(&t, "reps", reps);
    add_str(&t, "entry", uentry_name(tc.cfg.entry));
    add_num(&t, "stack_pages", U_STACK_PAGES);
    measure_world(ctx, &t, &tc);
}

/* --- commit mode -------------------------------------------------------------- */

struct commit_run {
    struct aspace *as;
    uint32_t dirty; /* percent of each page's words changed */
    bool diff;      /* make the copies stale: the commit must diff */
};

static int64_t run_commit(void *arg)
{
    const struct commit_run *r = arg;
    uint32_t kernel = read_cr3();
    cr3_load(aspace_cr3(r->as)); /* as at a synchronisation point of the thread */
    uint32_t changed = U_PAGE / 4 * r->dirty / 100, step = changed ? U_PAGE / 4 / changed : 0;
    for (uint32_t i = 0; i < COMMIT_PAGES; i++) {
        uint32_t va = U_HEAP + i * U_PAGE;
        twin_fault(r->as, va);
        uint32_t *w = (uint32_t *)(*aspace_pte(r->as, va) & PTE_ADDR_MASK);
        for (uint32_t k = 0; k < changed; k++)
            w[k * step] = ~w[k * step];
        if (r->diff)
            twin_bump_version((uint32_t)shared_region_index(va));
    }
    uint64_t t0 = tsc_begin();
    twin_commit(r->as, 0);
    uint64_t t1 = tsc_end();
    cr3_load(kernel);
    return (int64_t)(t1 - t0);
}

static void commits(struct bench_ctx *ctx, enum uentry entry)
{
    tc.cfg = world_config(true, true, true, entry);
    thread_case(&tc, ab_touch, 1, 0);
    tc.t[0].va = U_HEAP;
    tc.t[0].pages = COMMIT_PAGES;
    struct bench_case tw = { .name = "twin", .per = COMMIT_PAGES };
    add_num(&tw, "pages", COMMIT_PAGES);
    measure_world(ctx, &tw, &tc);

    static const uint32_t dirty[] = { 0, 1, 10, 100 };
    struct region_mark mark;
    memory_mark(&mark);
    struct uworld_config cfg = tc.cfg;
    struct commit_run r = { 0, 0, true };
    bool ok = uworld_init(&cfg) && (r.as = uworld_space());
    for (uint32_t k = 0; k < 5; k++) {
        bool single = k == 4;
        const char *name = single ? "commit_single_writer" : "commit";
        if (!ok) {
            bench_skip(ctx, name, "no memory for a commit-mode world");
            continue;
        }
        r.dirty = single ? 100 : dirty[k];
        r.diff = !single;
        struct bench_case c = { .name = name, .per = COMMIT_PAGES };
        add_num(&c, "pages", COMMIT_PAGES);
        add_num(&c, "dirty", r.dirty);
        bench_measure(ctx, &c, run_commit, &r);
    }
    uworld_end();
    memory_release(&mark);
}

/* --- mutexes, malloc ------------------------------------------------------------ */

static void lock_unlock(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < fiber_reps; i++) {
        fmutex_lock(&fiber_lock);
        fmutex_unlock(&fiber_lock);
    }
}

static void lock_pingpong(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < fiber_reps; i++) {
        fmutex_lock(&fiber_lock);
        fiber_yield();
        fmutex_unlock(&fiber_lock);
        fiber_yield();
    }
}

static int64_t run_mutex_fiber(void *arg)
{
    (void)arg;
    return fibers_run(lock_unlock, 1, 0);
}

static int64_t run_mutex_fiber_contended(void *arg)
{
    (void)arg;
    return fibers_run(lock_pingpong, 2, 0);
}

static void mutexes(struct bench_ctx *ctx, uint32_t reps, enum uentry entry)
{
    fiber_reps = reps;
    struct bench_case f = { .name = "mutex_fiber", .per = reps };
    add_num(&f, "reps", reps);
    bench_measure(ctx, &f, run_mutex_fiber, 0);
    struct bench_case fc = { .name = "mutex_fiber_contended", .per = 2 * (uint64_t)reps };
    add_num(&fc, "reps", reps);
    add_num(&fc, "threads", 2);
    bench_measure(ctx, &fc, run_mutex_fiber_contended, 0);

    tc.cfg = world_config(true, false, true, entry);
    thread_case(&tc, ab_mutex, 1, reps);
    struct bench_case u = { .name = "mutex_thread_uncontended", .per = reps };
    add_num(&u, "reps", reps);
    measure_world(ctx, &u, &tc);

    thread_case(&tc, ab_mutex_pingpong, 2, reps);
    struct bench_case c = { .name = "mutex_thread_contended", .per = 2 * (uint64_t)reps };
    add_num(&c, "reps", reps);
    add_num(&c, "threads", 2);
    add_str(&c, "entry", uentry_name(tc.cfg.entry));
    measure_world(ctx, &c, &tc);
}

static void mallocs(struct bench_ctx *ctx, uint32_t reps, enum uentry entry)
{
    static const char *const names[2] = { "malloc_subheap", "malloc_shared_lock" };
    for (uint32_t k = 0; k < 2; k++) {
        tc.cfg = world_config(true, false, true, entry);
        thread_case(&tc, ab_malloc, 1, reps);
        tc.t[0].size = 64;
        tc.t[0].kind = k;
        struct bench_case c = { .name = names[k], .per = reps };
        add_num(&c, "reps", reps);
        add_num(&c, "size", 64);
        measure_world(ctx, &c, &tc);
    }
}

/* --- the address-space lock model ----------------------------------------------- */

static bool demand_region(struct tcase *c, struct aspace *as, uint32_t thread)
{
    const struct ab_thread *t = &c->t[thread];
    aspace_add_region(as, REGION_DEMAND, t->va, t->va + t->pages * U_PAGE);
    return true;
}

static void lock_model(struct bench_ctx *ctx, uint32_t reps, enum uentry entry)
{
    static const char *const spaces[2] = { "isolated", "shared" };
    uint32_t map_reps = reps / 10 ? reps / 10 : 1;
    for (int shared = 0; shared < 2; shared++) {
        for (int demand = 0; demand < 2; demand++) {
            tc.cfg = world_config(true, false, true, entry);
            thread_case(&tc, demand ? ab_touch : ab_map, 2, map_reps);
            tc.one_space = shared;
            uint32_t pages = demand ? FAULT_PAGES : MAP_PAGES;
            for (uint32_t i = 0; i < 2; i++) {
                /* in one space the threads need ranges of their own */
                tc.t[i].va = U_PRIVATE + (shared ? i * (1u << 20) : 0);
                tc.t[i].pages = pages;
            }
            tc.prepare = demand ? demand_region : 0;
            const char *name = demand ? "demand_fault" : "map_unmap";
            run_world(&tc); /* the lock counts go into the params */
            uint64_t per = demand ? 2 * (uint64_t)pages : 2 * (uint64_t)map_reps * pages;
            struct bench_case c = { .name = name, .per = per };
            add_str(&c, "space", spaces[shared]);
            add_num(&c, "threads", 2);
            add_num(&c, "pages", pages);
            if (!demand)
                add_num(&c, "reps", map_reps);
            add_num(&c, "locks", tc.locks);
            add_num(&c, "lock_max", tc.lock_max);
            measure_world(ctx, &c, &tc);
        }
    }
}

/* --- the working set ------------------------------------------------------------- */

/* Thread i's buffer at U_PRIVATE in its own space: same address, its own frames. */
static bool map_buffer(struct tcase *c, struct aspace *as, uint32_t thread)
{
    uint32_t pa = c->buf[thread];
    if (c->large) {
        for (uint32_t off = 0; off < c->buf_bytes; off += LARGE_PAGE_SIZE)
            if (!aspace_map_large(as, U_PRIVATE + off, pa + off, USER_RW))
                return false;
        return true;
    }
    for (uint32_t off = 0; off < c->buf_bytes; off += U_PAGE)
        if (!aspace_map(as, U_PRIVATE + off, pa + off, USER_RW))
            return false;
    return true;
}

/* The quick suite's workset_threads: one size per region of the sweep
 * instead of all of it; each size costs about as much as any other, and the
 * full sweep belongs to suite=paper. */
static const uint64_t quick_sizes[] = CR_DEF_ASPACE_QUICK_SIZES;

static uint32_t workset_sizes(const struct config *cfg, const uint64_t **sizes)
{
    if (cfg->suite != SUITE_QUICK || cfg->given[KEY_SIZES])
        return sweep_sizes(cfg, sizes);
    uint32_t n = 0;
    while (n < sizeof quick_sizes / sizeof quick_sizes[0] && quick_sizes[n] <= cfg->maxsize)
        n++;
    *sizes = quick_sizes;
    return n;
}

static void workset_threads(struct bench_ctx *ctx, enum uentry entry)
{
    const struct config *cfg = ctx->cfg;
    const uint64_t *sizes;
    uint32_t n = workset_sizes(cfg, &sizes);
    bool large = paging_current_size() == PAGESIZE_4M;
    for (uint32_t i = 0; i < n; i++) {
        if (cfg->fill == FILL_SSE && !cpu_has(FEAT_SSE)) {
            bench_skip(ctx, "workset_threads", "fill=sse: the CPU lacks SSE");
            continue;
        }
        uint32_t size = (uint32_t)sizes[i], reps = sweep_reps(ctx, size);
        uint32_t align = large ? LARGE_PAGE_SIZE : U_PAGE;
        uint32_t bytes = (size + align - 1) / align * align;
        if (!bytes)
            bytes = align;
        struct region_mark mark;
        memory_mark(&mark);
        tc.cfg = world_config(true, false, true, entry);
        thread_case(&tc, ab_workset, 2, reps);
        tc.prepare = map_buffer;
        tc.large = large;
        tc.buf_bytes = bytes;
        tc.buf[0] = bytes <= U_PRIVATE_END - U_PRIVATE ? (uint32_t)memory_alloc(bytes, align) : 0;
        tc.buf[1] = tc.buf[0] ? (uint32_t)memory_alloc(bytes, align) : 0;
        for (uint32_t k = 0; k < 2; k++) {
            tc.t[k].va = U_PRIVATE;
            tc.t[k].size = size;
            tc.t[k].kind = cfg->fill;
        }
        struct bench_case c = { .name = "workset_threads", .per = 1 };
        add_num(&c, "size", size);
        add_num(&c, "reps", reps);
        add_str(&c, "fill", config_value_name(cfg, KEY_FILL));
        add_str(&c, "entry", uentry_name(tc.cfg.entry));
        if (tc.buf[1])
            measure_world(ctx, &c, &tc);
        else
            bench_skip(ctx, "workset_threads", "two buffers of this size do not fit in memory");
        memory_release(&mark);
    }
}

/* --- the benchmark ------------------------------------------------------------------ */

static void run(struct bench_ctx *ctx)
{
    const uint64_t *sizes;
    uint32_t nsizes = workset_sizes(ctx->cfg, &sizes);
    /* switch 5, tlb 16, flushes 3, faults 2, syscalls 2, create 2, commit 6,
     * mutex 4, malloc 2, lock model 4, and the sweep */
    bench_plan(ctx, 46 + nsizes);
    const char *why = uworld_unavailable();
    if (why) {
        bench_skip(ctx, "aspace", why);
        return;
    }
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_ASPACE_PAPER_REPS : CR_DEF_ASPACE_REPS);
    enum uentry entry = uentry_sysenter_ok() ? UENTRY_SYSENTER : UENTRY_INT80;
    switches(ctx, reps, entry);
    tlb(ctx);
    flushes(ctx, reps);
    faults(ctx, entry);
    syscalls(ctx, reps);
    creates(ctx, reps, entry);
    commits(ctx, entry);
    mutexes(ctx, reps, entry);
    mallocs(ctx, reps, entry);
    lock_model(ctx, reps, entry);
    workset_threads(ctx, entry);
}

const struct bench bench_aspace = {
    .name = "aspace",
    .what = "threads with address spaces of their own vs fibers: switches, TLB, faults, commits, locks",
    .in_quick = true,
    .needs_paging = true,
    .unavailable = 0, /* uworld_unavailable() is asked in run(), once paging is on */
    .run = run,
};
