/* bench shootdown: a page-table entry that k CPUs use is changed, and the
 * change is done only when no CPU can still use the old translation (a TLB
 * shootdown). CPU 0 points the entry of one page at another frame (A -> B,
 * then back), invalidates its own TLB entry, and then, by mode:
 *
 *   ipi       sends every other CPU an IPI; the handler invlpg's the page,
 *             reads it and acknowledges (the receivers run with IF=1, for
 *             the IPI vector only, inside the case)
 *   mailbox   writes every other CPU's mailbox word; each polls its own
 *             between its reads of the page, invlpg's, reads, acknowledges
 *   isolated  nothing more: every CPU runs in an address space of its own
 *             (PATHREADS' threads), where the page is private, so no other
 *             CPU holds the translation
 *
 * Between changes the other CPUs keep reading the page (their TLBs hold it).
 * The time is CPU 0's, from the entry's write to the last acknowledgement,
 * per change, for k = 1, 2, 4, ... CPUs. Invariant: the read a CPU makes
 * after its invalidation sees the new frame's value (through a stale
 * translation it would read the old frame's); params.stale counts the
 * reads that did not (0, else an error record), params.unacked the
 * changes some CPU never acknowledged within a second (0, else an error).
 *
 * Kernel only: the hosted build cannot change page tables (pagewin).
 * Emulators: QEMU's TCG keeps a software TLB per vCPU that only invlpg
 * (or a CR3 load) empties, so a missing invalidation does show there as a
 * stale read; its timing across vCPUs is host threads, not hardware. */
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/error_record.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "lib/fmt.h"
#include "runtime/pagewin.h"

#define ROUNDS_DEFAULT 2000  /* changes per sample (reps=) */
#define ACK_WAIT_MS 1000     /* a CPU silent this long after a change: unacked */
#define VALUE_A 0xaaaa0001u  /* what frame A holds */
#define VALUE_B 0xbbbb0002u

enum mode { MODE_IPI, MODE_MAILBOX, MODE_ISOLATED, MODES };
static const char *const mode_names[MODES] = { "ipi", "mailbox", "isolated" };

struct mailbox {
    volatile uint32_t gen;
} __attribute__((aligned(64)));

/* One mode's case, and everything its CPUs share. */
struct shoot {
    enum mode mode;
    uint32_t k, rounds;
    uint32_t va;                      /* the page, in the window */
    uint32_t *pd[SMP_MAX_CPUS];      /* CPU w's directory: one for all, or one each (isolated) */
    uint32_t *pte[SMP_MAX_CPUS];      /* the page's entry in CPU w's directory */
    uint32_t frame_a, frame_b;
    volatile uint32_t expected;       /* what the page reads after the current change */
    volatile uint32_t acks, ready, stop;
    volatile uint32_t stale;
    struct mailbox box[SMP_MAX_CPUS];
    uint32_t done, unacked_now;       /* changes made, unacknowledged ones, this sample */
    uint64_t ticks;                   /* this sample's, CPU 0's */
    uint32_t stale_total, unacked, cut;
};

static struct shoot shoots[MODES];
static struct shoot *volatile current; /* the case the IPI handler serves */

static inline uint32_t read_page(uint32_t va) { return *(volatile uint32_t *)va; }

/* The receiver's side of one change: drop the translation, read through
 * the new one, acknowledge. */
static void take_change(struct shoot *s)
{
    tlb_invalidate(s->va);
    if (read_page(s->va) != s->expected)
        xadd32(&s->stale, 1);
    xadd32(&s->acks, 1);
}

static void on_ipi(void)
{
    if (current)
        take_change(current);
}

static void receiver(struct shoot *s, uint32_t w)
{
    uint32_t seen = s->box[w].gen, sink = 0;
    sink += read_page(s->va); /* the translation is in this CPU's TLB from now on */
    if (s->mode == MODE_IPI)
        sti(); /* only the IPI gate is open (kernel/smp.h) */
    xadd32(&s->ready, 1);
    while (!s->stop) {
        sink += read_page(s->va);
        if (s->mode == MODE_MAILBOX && s->box[w].gen != seen) {
            seen = s->box[w].gen;
            take_change(s);
        }
        cpu_pause();
    }
    cli();
    (void)sink;
}

static bool wait_acks(struct shoot *s, uint32_t want, uint64_t limit)
{
    uint64_t t0 = rdtsc();
    while (s->acks != want)
        if (rdtsc() - t0 > limit)
            return false;
    return true;
}

/* CPU 0: the changes, timed from the first entry write to the last acknowledgement. */
static void changer(struct shoot *s)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : 1000000000ull, limit = hz / 1000 * ACK_WAIT_MS;
    uint64_t deadline = parallel_deadline();
    while (s->ready != s->k - 1 && rdtsc() < deadline)
        cpu_pause();
    if (s->ready != s->k - 1) { /* a receiver never got ready: nothing to time, and it says so */
        s->unacked_now++;
        s->ticks = 0;
        s->done = 0;
        s->stop = 1;
        return;
    }
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint64_t t0 = tsc_begin();
    uint32_t r = 0;
    for (; r < s->rounds && parallel_budget_left(&b, r); r++) {
        bool to_b = !(r & 1); /* every sample starts on A */
        s->expected = to_b ? VALUE_B : VALUE_A;
        xchg32(&s->acks, 0); /* a locked op: the stores above are visible before any IPI */
        *s->pte[0] = (to_b ? s->frame_b : s->frame_a) | PTE_P | PTE_W;
        tlb_invalidate(s->va);
        if (read_page(s->va) != s->expected)
            xadd32(&s->stale, 1);
        if (s->mode == MODE_ISOLATED || s->k == 1)
            continue;
        for (uint32_t w = 1; w < s->k; w++) {
            if (s->mode == MODE_IPI)
                smp_ipi_send(w);
            else
                s->box[w].gen = r + 1;
        }
        if (!wait_acks(s, s->k - 1, limit)) {
            s->unacked_now++;
            r++;
            break;
        }
    }
    s->ticks = tsc_end() - t0;
    s->done = r;
    s->stop = 1;
}

static void worker(uint32_t w, void *arg)
{
    struct shoot *s = arg;
    cr3_load((uint32_t)s->pd[w]);
    if (w == 0)
        changer(s);
    else
        receiver(s, w);
}

static int64_t run_mode(void *arg)
{
    struct shoot *s = arg;
    uint32_t kernel_cr3 = read_cr3();
    /* every directory maps the page to A again */
    for (uint32_t w = 0; w < s->k; w++)
        *s->pte[w] = s->frame_a | PTE_P | PTE_W;
    s->acks = s->ready = s->stop = s->stale = 0;
    s->unacked_now = 0;
    for (uint32_t w = 0; w < s->k; w++)
        s->box[w].gen = 0;
    current = s;
    smp_ipi_handler(s->mode == MODE_IPI ? on_ipi : 0);
    cr3_load((uint32_t)s->pd[0]); /* the other CPUs adopt it at the post, then load their own */
    parallel_run(s->k, worker, s);
    cr3_load(kernel_cr3);
    smp_ipi_handler(0);
    current = 0;
    s->stale_total += s->stale;
    s->unacked += s->unacked_now;
    s->cut += s->done < s->rounds;
    return parallel_scaled((int64_t)s->ticks, s->rounds, s->done);
}

static void add(struct bench_case *c, struct bench_param p) { c->params[c->nparams++] = p; }

static void late(struct bench_case *c, void *hook_arg)
{
    struct shoot *s = hook_arg;
    add(c, (struct bench_param)PARAM_NUM("stale", s->stale_total));
    add(c, (struct bench_param)PARAM_NUM("unacked", s->unacked));
    add(c, (struct bench_param)PARAM_NUM("cut", s->cut));
    char msg[160];
    if (s->stale_total) {
        fmt(msg, sizeof msg, "shootdown %s, %u CPUs: %u reads after an invalidation saw the old frame", mode_names[s->mode],
            s->k, s->stale_total);
        error_record("stale_translation", msg);
    }
    if (s->unacked) {
        fmt(msg, sizeof msg, "shootdown %s, %u CPUs: %u changes not acknowledged within %u ms", mode_names[s->mode],
            s->k, s->unacked, ACK_WAIT_MS);
        error_record("shootdown_unacked", msg);
    }
}

/* The page tables of one k: one directory for all CPUs, or one each. */
static bool build(struct shoot *s, uint32_t k, uint32_t va, uint32_t frame_a, uint32_t frame_b)
{
    uint32_t dirs = s->mode == MODE_ISOLATED ? k : 1;
    for (uint32_t w = 0; w < dirs; w++) {
        uint32_t *dir = pagewin_dir_new(), *table = dir ? pagewin_table(dir, va) : 0;
        if (!table)
            return false;
        s->pd[w] = dir;
        s->pte[w] = &table[(va >> 12) & (PAGEWIN_PAGES - 1)];
    }
    for (uint32_t w = dirs; w < k; w++) {
        s->pd[w] = s->pd[0];
        s->pte[w] = s->pte[0];
    }
    s->k = k;
    s->va = va;
    s->frame_a = frame_a;
    s->frame_b = frame_b;
    s->stale_total = s->unacked = s->cut = 0;
    return true;
}

static void run(struct bench_ctx *ctx)
{
    uint32_t ks[PARALLEL_COUNTS_MAX], nk = parallel_counts(ks);
    uint32_t rounds = bench_reps(ctx, ROUNDS_DEFAULT);
    bench_plan(ctx, nk * MODES);
    uint32_t va = pagewin_slot(0);
    for (uint32_t i = 0; i < nk; i++) {
        struct region_mark mark;
        memory_mark(&mark);
        uint32_t *a = memory_alloc(PAGE_SIZE, PAGE_SIZE), *b = memory_alloc(PAGE_SIZE, PAGE_SIZE);
        bool ok = a && b;
        if (ok) {
            a[0] = VALUE_A;
            b[0] = VALUE_B;
        }
        static struct bench_case cases[MODES];
        static struct bench_item items[MODES];
        for (uint32_t m = 0; m < MODES && ok; m++) {
            struct shoot *s = &shoots[m];
            s->mode = (enum mode)m;
            s->rounds = rounds;
            ok = build(s, ks[i], va, (uint32_t)a, (uint32_t)b);
            cases[m] = (struct bench_case){ .name = "shootdown", .per = rounds };
            add(&cases[m], (struct bench_param)PARAM_STR("mode", mode_names[m]));
            add(&cases[m], (struct bench_param)PARAM_NUM("cpus", ks[i]));
            parallel_sweep_params(&cases[m], ks[i]);
            add(&cases[m], (struct bench_param)PARAM_NUM("rounds", rounds));
            items[m] = (struct bench_item){ .c = &cases[m], .fn = run_mode, .arg = s, .late_params = late, .hook_arg = s };
        }
        if (ok) {
            bench_measure_set(ctx, items, MODES);
        } else {
            for (uint32_t m = 0; m < MODES; m++)
                bench_skip(ctx, "shootdown", "no memory for the page tables");
        }
        parallel_settle(); /* every CPU back on the kernel's directory before its memory goes */
        memory_release(&mark);
    }
}

static const char *unavailable(const struct config *cfg)
{
    (void)cfg;
    const char *why = pagewin_unavailable(1);
    return why ? why : parallel_unavailable(2);
}

const struct bench bench_shootdown = {
    .name = "shootdown",
    .what = "a page-table entry k CPUs use changed: invalidation by IPI vs polled mailbox vs isolated address spaces",
    .in_smp = true,
    .needs_paging = true,
    .unavailable = unavailable,
    .run = run,
};
