#include "runtime/uthread_selftest.h"

#include "arch/mmu.h"
#include "arch/paging.h"
#include "kernel/memory.h"
#include "kernel/selftest.h"
#include "lib/fmt.h"
#include "runtime/frames.h"
#include "runtime/iaheap_user.h"
#include "runtime/twin.h"
#include "runtime/utest_user.h"
#include "runtime/uthread.h"

#define D SELFTEST_DETAIL_MAX

extern char _kernel_start[];

/* --- a world per test ------------------------------------------------------ */

static struct region_mark world_mark;

static struct uworld_config config(bool commit)
{
    return (struct uworld_config){ .heap_pages = 32, .commit_mode = commit, .isolated = true,
                                   .entry = UENTRY_SYSENTER, .global_pages = true, .pool_frames = 512 };
}

static bool begin(const struct uworld_config *cfg, char *d)
{
    memory_mark(&world_mark);
    paging_enable(PAGESIZE_4K);
    const char *why = uworld_unavailable();
    if (!why && !uworld_init(cfg))
        why = "no memory for the threads' frames";
    if (why) {
        fmt(d, D, "cannot run threads: %s", why);
        paging_disable();
        memory_release(&world_mark);
        return false;
    }
    return true;
}

static void finish(void)
{
    uworld_end();
    paging_disable();
    memory_release(&world_mark);
}

static struct utest_globals *globals(void) { return uworld_shared(U_GLOBALS); }
static struct usync_area *sync_area(void) { return uworld_shared(U_SYNC_AREA); }

/* A thread running fn(arg) in an address space of its own. */
static uint32_t spawn(void (*fn)(void *), void *arg)
{
    struct aspace *as = uworld_space();
    return as ? uworld_spawn(as, fn, arg) : 0;
}

/* --- the tests ---------------------------------------------------------------- */

bool uthread_test_syscalls(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    g->sysenter_ok = uentry_sysenter_ok();
    uint32_t tid = spawn(utest_syscalls, 0);
    bool ran = tid && uworld_run();
    bool ok = ran && g->result[0] == USYS_NULL_MAGIC && g->result[1] == USYS_NULL_MAGIC && g->result[2] == tid &&
              g->result[3] == USYS_ERROR;
    fmt(d, D, "ring 3: int 0x80 gave 0x%x, sysenter%s 0x%x; thread %u read its id %u from its stack; "
              "an unknown call gave 0x%x",
        g->result[0], g->sysenter_ok ? "" : " (absent: not tried)", g->result[1], tid, g->result[2], g->result[3]);
    finish();
    return ok;
}

bool uthread_test_share(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    bool ran = spawn(utest_share_writer, 0) && uworld_run();
    const struct uworld_stats *st = uworld_stats();
    bool ok = ran && g->result[0] == 0x51ab && g->result[1] == 0x4ea9 && g->result[2] == 0 && st->creates == 1 &&
              st->cr3_loads >= 2;
    fmt(d, D, "a thread forked before the writes read the global 0x%x and the heap object 0x%x "
              "(want 0x51ab, 0x4ea9) from another address space (%u CR3 loads)",
        g->result[0], g->result[1], st->cr3_loads);
    finish();
    return ok;
}

bool uthread_test_stack_private(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    bool ran = spawn(utest_stack_parent, 0) && uworld_run();
    bool ok = ran && g->result[0] == 1 && g->result[1] == 1 && g->result[2] == 2;
    fmt(d, D, "stack variable at 0x%x: the child saw %u at create (the copy) and %u after the parent wrote 2; "
              "the parent kept %u after the child wrote 3",
        g->stack_addr, g->result[0], g->result[1], g->result[2]);
    finish();
    return ok;
}

bool uthread_test_faults(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    struct aspace *ro = uworld_space();
    void *page = memory_alloc(PAGE_SIZE, PAGE_SIZE);
    g->ro_page = U_PRIVATE;
    bool made = ro && page && aspace_map(ro, U_PRIVATE, (uint32_t)page, PTE_P | PTE_U);
    uint32_t t[5] = {
        spawn(utest_fault_kernel_write, _kernel_start),
        spawn(utest_fault_kernel_read, _kernel_start),
        made ? uworld_spawn(ro, utest_fault_readonly, 0) : 0,
        spawn(utest_fault_privileged, 0),
        spawn(utest_survivor, 0),
    };
    bool ran = made && t[0] && t[1] && t[2] && t[3] && t[4] && uworld_run();
    const struct uworld_stats *st = uworld_stats();
    bool stopped = true;
    for (int i = 0; i < 4; i++)
        stopped &= uworld_status(t[i]) == UTHREAD_FAULTED;
    bool ok = ran && stopped && st->thread_faults == 4 && g->result[4] == 0 && g->result[0] == 0xa11fe &&
              uworld_status(t[4]) == 0;
    fmt(d, D, "kernel write, kernel read, read-only write, cli: %u thread faults, the threads stopped (%s); "
              "a fifth thread ran on to the end (0x%x)",
        st->thread_faults, stopped ? "status 0xfa" : "NOT all", g->result[0]);
    finish();
    return ok;
}

static bool run_writers(const struct utest_writer w[2], bool a_first)
{
    struct utest_globals *g = globals();
    g->writer[0] = w[0];
    g->writer[1] = w[1];
    sync_area()->b = (struct ubarrier){ 2, 0, 0 };
    int first = a_first ? 0 : 1;
    return spawn(utest_commit_writer, &UTEST->writer[first]) && spawn(utest_commit_writer, &UTEST->writer[1 - first]) &&
           uworld_run();
}

bool uthread_test_commit_merge(char *d)
{
    struct uworld_config cfg = config(true);
    if (!begin(&cfg, d))
        return false;
    const struct utest_writer w[2] = { { 0, 0xa0, 1, 0 }, { 1, 0xb1, 0, 0 } };
    bool ran = run_writers(w, true);
    struct utest_globals *g = globals();
    const struct commit_stats *c = twin_totals();
    bool ok = ran && g->page[0] == 0xa0 && g->page[1] == 0xb1 && g->writer[0].seen == 0 && g->writer[1].seen == 0 &&
              c->diffed >= 1 && c->copied >= 1;
    fmt(d, D, "two threads wrote words 0 and 1 of one page, each unseen by the other (%u, %u) until the barrier's "
              "commits: shared page holds 0x%x 0x%x; %u twins, %u pages copied whole, %u diffed (%u words)",
        g->writer[0].seen, g->writer[1].seen, g->page[0], g->page[1], twin_count(), c->copied, c->diffed, c->words);
    finish();
    return ok;
}

bool uthread_test_commit_order(char *d)
{
    const struct utest_writer w[2] = { { 2, 0x111, 2, 0 }, { 2, 0x222, 2, 0 } };
    static const bool a_first[3] = { true, false, true };
    uint32_t got[3] = { 0, 0, 0 };
    for (int i = 0; i < 3; i++) {
        struct uworld_config cfg = config(true);
        if (!begin(&cfg, d))
            return false;
        bool ran = run_writers(w, a_first[i]);
        got[i] = ran ? globals()->page[2] : 0;
        finish();
    }
    /* each writer reaches the barrier in the order it ran: the second commits last */
    bool ok = got[0] == 0x222 && got[1] == 0x111 && got[2] == 0x222;
    fmt(d, D, "both threads wrote word 2: run A,B -> 0x%x, B,A -> 0x%x, A,B again -> 0x%x (the last committer's, "
              "the same every time)",
        got[0], got[1], got[2]);
    return ok;
}

static uint32_t class_bytes(uint32_t size)
{
    uint32_t b = IA_MIN_OBJECT;
    while (b < size)
        b <<= 1;
    return b;
}

/* Every object inside its owner's sub-heap, cache-line aligned, none overlapping. */
static bool heap_disjoint(const struct utest_globals *g, const struct ia_meta *m, char *d)
{
    for (uint32_t who = 0; who < 2; who++) {
        for (uint32_t i = 0; i < UTEST_ALLOCS; i++) {
            uint32_t p = g->ptr[who][i], n = class_bytes(g->size[who][i]);
            if (!p || p % 64 || p < m->subs[who].lo || p + n > m->subs[who].hi) {
                fmt(d, D, "object %u of thread %u at 0x%x (%u bytes) outside sub-heap %u [0x%x, 0x%x)", i, who + 1,
                    p, n, who, m->subs[who].lo, m->subs[who].hi);
                return false;
            }
            for (uint32_t v = 0; v < 2; v++)
                for (uint32_t j = 0; j < UTEST_ALLOCS; j++) {
                    uint32_t q = g->ptr[v][j], k = class_bytes(g->size[v][j]);
                    if ((v != who || j != i) && p < q + k && q < p + n) {
                        fmt(d, D, "objects 0x%x and 0x%x overlap", p, q);
                        return false;
                    }
                }
        }
    }
    return true;
}

bool uthread_test_heap(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    bool ran = spawn(utest_heap_owner, 0) && spawn(utest_heap_other, 0) && uworld_run();
    const struct ia_meta *m = uworld_shared(U_HEAP);
    uint32_t obj = g->result[0];
    bool home = obj >= m->subs[0].lo && obj < m->subs[0].hi;
    bool ok = ran && home && g->result[1] != 0 && g->result[2] == 1;
    fmt(d, D, "object 0x%x of thread 1 (in sub-heap 0: %s), freed by thread 2: remote list (%u), back to thread 1 "
              "at its allocation %u; %u objects each: own sub-heaps, disjoint, 64-byte aligned",
        obj, home ? "yes" : "no", g->result[2], g->result[1], UTEST_ALLOCS);
    if (ok && !heap_disjoint(g, m, d))
        ok = false;
    finish();
    return ok;
}

bool uthread_test_lifecycle(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    bool ran = spawn(utest_lifecycle, 0) && uworld_run();
    const struct umark *mk;
    uint32_t n = uworld_marks(&mk);
    uint32_t before = n >= 2 ? mk[0].frames : 0, after = n >= 2 ? mk[1].frames : 1;
    uint32_t creates = uworld_stats()->creates, ok_joins = g->result[0];
    finish();
    uint32_t leaked = uworld_stats()->frames_leaked;
    bool ok = ran && n == 2 && before == after && creates == 20 && ok_joins == 20 && leaked == 0;
    fmt(d, D, "20 x create (new directory, stack copy), exit, join: %u frames in use before, %u after; %u left "
              "once the world ended",
        before, after, leaked);
    return ok;
}

static bool counter_world(bool commit, uint32_t *counter, uint32_t *handshake, uint32_t *switches)
{
    struct uworld_config cfg = config(commit);
    char d[D];
    if (!begin(&cfg, d))
        return false;
    sync_area()->b = (struct ubarrier){ 3, 0, 0 };
    bool ran = spawn(utest_counter, (void *)0) && spawn(utest_counter, (void *)1) &&
               spawn(utest_counter, (void *)2) && uworld_run();
    *counter = globals()->counter;
    *handshake = globals()->result[0];
    *switches = uworld_stats()->switches;
    finish();
    return ran;
}

bool uthread_test_sync(char *d)
{
    uint32_t c[2] = { 0, 0 }, h[2] = { 0, 0 }, sw[2] = { 0, 0 };
    bool ran = counter_world(false, &c[0], &h[0], &sw[0]) && counter_world(true, &c[1], &h[1], &sw[1]);
    const uint32_t want = 3 * UTEST_COUNTER_REPS;
    bool ok = ran && c[0] == want && c[1] == want && h[0] == 42 && h[1] == 42;
    fmt(d, D, "3 threads x %u increments, each yielding inside the futex mutex: %u (direct), %u (commit mode), "
              "want %u; condvar handshake %u, %u; %u and %u switches",
        UTEST_COUNTER_REPS, c[0], c[1], want, h[0], h[1], sw[0], sw[1]);
    return ok;
}

bool uthread_test_map_demand(char *d)
{
    struct uworld_config cfg = config(false);
    if (!begin(&cfg, d))
        return false;
    struct utest_globals *g = globals();
    struct aspace *as = uworld_space();
    const uint32_t demand = U_PRIVATE + (1u << 20);
    if (as)
        aspace_add_region(as, REGION_DEMAND, demand, demand + 8 * U_PAGE);
    bool ran = as && uworld_spawn(as, utest_map_demand, (void *)demand) && uworld_run();
    uint32_t faults = uworld_stats()->demand_faults, locks = as ? as->lock_taken : 0;
    bool ok = ran && g->result[0] == 0 && g->result[1] == 4 && g->result[2] == 0 && g->result[3] == 8 &&
              faults == 8 && locks == 10;
    fmt(d, D, "map 4 pages (%s), write, unmap (%s); 8 demand-zero faults (%u zeroed pages seen); the space's lock "
              "taken %u times (want 10)",
        g->result[0] == 0 ? "ok" : "refused", g->result[2] == 0 ? "ok" : "refused", g->result[3], locks);
    finish();
    return ok;
}
