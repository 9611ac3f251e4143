/* bench aslock: PATHREADS' mmap_sem argument, in ring 0 on k CPUs. Every CPU
 * maps, unmaps and demand-faults pages of a region of its own; what differs
 * is who shares the lock that guards the page tables:
 *
 *   shared    one address space (one directory) for the k CPUs and one
 *             reader-writer lock (runtime/smplock.h's smprw: Linux's
 *             per-process mmap_sem): faults take it to read, map and unmap
 *             to write
 *   isolated  an address space per CPU (PATHREADS' threads), each with a
 *             lock of its own
 *
 *   demand_fault  each CPU touches `pages` unmapped pages of its region: a
 *                 real page fault each, whose handler takes the lock to read,
 *                 zeroes a frame from the CPU's own pool and maps it
 *   map_unmap     each CPU maps its `pages` and unmaps them again, reps
 *                 times: one write acquisition per page each way (unmap
 *                 with invlpg)
 *
 * Time per operation over all the CPUs (a throughput's inverse), for
 * k = 1, 2, 4, ... CPUs. What it models: the lock's serialisation and the
 * bouncing of its cache line, a fault's entry and return. Not Linux's VMA
 * tree and page allocator (each CPU has its frames ready), nor the TLB
 * shootdown that an unmap in a shared space owes the CPUs that used the
 * page (bench shootdown measures that): here no CPU touches another's pages.
 * params.missing counts faults that did not arrive as planned (0, else an error record).
 *
 * Kernel only: the hosted build measures Linux's own (bench=linuxvm). */
#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/error_record.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "lib/defaults.h"
#include "lib/fmt.h"
#include "lib/string.h"
#include "runtime/pagewin.h"
#include "runtime/smplock.h"

#define FAULT_PAGES 256      /* demand_fault: pages each CPU touches per sample */
#define MAP_PAGES 64         /* map_unmap: pages each CPU maps and unmaps per round */

enum space { SHARED, ISOLATED, SPACES };
static const char *const space_names[SPACES] = { "shared", "isolated" };
enum op { OP_FAULT, OP_MAP, OPS };
static const char *const op_names[OPS] = { "demand_fault", "map_unmap" };

struct lock_line {
    struct smprw rw;
} __attribute__((aligned(64)));

struct counter_line {
    volatile uint32_t n;
} __attribute__((aligned(64)));

/* One case: a space kind, an operation, k CPUs. */
struct as_case {
    enum space space;
    enum op op;
    uint32_t k, pages, reps;
    uint32_t *pd[SMP_MAX_CPUS];   /* CPU w's directory */
    uint32_t *table[SMP_MAX_CPUS]; /* CPU w's region's page table */
    uint32_t va[SMP_MAX_CPUS];     /* CPU w's region */
    uint32_t frames[SMP_MAX_CPUS]; /* CPU w's pool: `pages` frames from here */
    struct lock_line locks[SMP_MAX_CPUS]; /* one (shared) or one per CPU (isolated) */
    struct counter_line faults[SMP_MAX_CPUS];
    uint32_t done[SMP_MAX_CPUS];
    uint32_t missing, cut;
};

static struct as_case cases_[SPACES];
static struct as_case *volatile current;

static struct smprw *lock_of(struct as_case *c, uint32_t w) { return &c->locks[c->space == SHARED ? 0 : w].rw; }

/* Whose region va lies in: by the directory in isolated spaces (the same
 * address in each), by the address in the shared one. -1: none of ours. */
static int owner_of(struct as_case *c, uint32_t va)
{
    uint32_t cr3 = read_cr3();
    for (uint32_t w = 0; w < c->k; w++)
        if (va - c->va[w] < PAGEWIN_BYTES && (c->space == SHARED || (uint32_t)c->pd[w] == cr3))
            return (int)w;
    return -1;
}

static bool demand_fault(uint32_t va, bool write)
{
    (void)write;
    struct as_case *c = current;
    int w = c ? owner_of(c, va) : -1;
    if (w < 0)
        return false;
    uint32_t page = (va - c->va[w]) >> 12;
    if (page >= c->pages)
        return false;
    uint32_t frame = c->frames[w] + page * PAGE_SIZE;
    struct smprw *l = lock_of(c, (uint32_t)w);
    smprw_read_lock(l);
    memset((void *)frame, 0, PAGE_SIZE);
    c->table[w][page] = frame | PTE_P | PTE_W;
    smprw_read_unlock(l);
    c->faults[w].n = c->faults[w].n + 1;
    return true;
}

static void touch(struct as_case *c, uint32_t w)
{
    uint32_t i = 0;
    for (; i < c->pages; i++)
        *(volatile uint32_t *)(c->va[w] + i * PAGE_SIZE) = i;
    c->done[w] = i;
}

static void map_unmap(struct as_case *c, uint32_t w)
{
    struct smprw *l = lock_of(c, w);
    uint32_t *pt = c->table[w], r = 0;
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    for (; r < c->reps && parallel_budget_left(&b, r); r++) {
        for (uint32_t i = 0; i < c->pages; i++) {
            smprw_write_lock(l);
            pt[i] = (c->frames[w] + i * PAGE_SIZE) | PTE_P | PTE_W;
            smprw_write_unlock(l);
        }
        for (uint32_t i = 0; i < c->pages; i++) {
            smprw_write_lock(l);
            pt[i] = 0;
            tlb_invalidate(c->va[w] + i * PAGE_SIZE);
            smprw_write_unlock(l);
        }
    }
    c->done[w] = r;
}

static void worker(uint32_t w, void *arg)
{
    struct as_case *c = arg;
    cr3_load((uint32_t)c->pd[w]); /* also drops the last sample's translations */
    if (c->op == OP_FAULT)
        touch(c, w);
    else
        map_unmap(c, w);
}

static int64_t run_case(void *arg)
{
    struct as_case *c = arg;
    uint32_t kernel_cr3 = read_cr3();
    for (uint32_t w = 0; w < c->k; w++) {
        memset(c->table[w], 0, PAGE_SIZE); /* every page unmapped again */
        smprw_init(lock_of(c, w));
        c->faults[w].n = 0;
    }
    current = c;
    int64_t t = parallel_run(c->k, worker, c);
    cr3_load(kernel_cr3);
    current = 0;
    uint64_t done = 0, planned = c->op == OP_FAULT ? c->pages : c->reps;
    for (uint32_t w = 0; w < c->k; w++) {
        done += c->done[w];
        if (c->op == OP_FAULT)
            c->missing += c->pages - c->faults[w].n;
    }
    c->cut += done < planned * c->k;
    return parallel_scaled(t, planned * c->k, done);
}

static void add(struct bench_case *c, struct bench_param p) { c->params[c->nparams++] = p; }

static void late(struct bench_case *bc, void *hook_arg)
{
    struct as_case *c = hook_arg;
    add(bc, (struct bench_param)PARAM_NUM("missing", c->missing));
    add(bc, (struct bench_param)PARAM_NUM("cut", c->cut));
    if (c->missing) {
        char msg[160];
        fmt(msg, sizeof msg, "aslock %s, %s space, %u CPUs: %u faults did not arrive as planned", op_names[c->op],
            space_names[c->space], c->k, c->missing);
        error_record("aslock_faults", msg);
    }
}

/* The directories, tables and frame pools of one case. */
static bool build(struct as_case *c, enum space space, enum op op, uint32_t k, uint32_t reps)
{
    *c = (struct as_case){ .space = space, .op = op, .k = k, .reps = reps };
    c->pages = op == OP_FAULT ? FAULT_PAGES : MAP_PAGES;
    uint32_t *shared = space == SHARED ? pagewin_dir_new() : 0;
    if (space == SHARED && !shared)
        return false;
    for (uint32_t w = 0; w < k; w++) {
        c->pd[w] = space == SHARED ? shared : pagewin_dir_new();
        c->va[w] = pagewin_slot(space == SHARED ? w : 0);
        c->table[w] = c->pd[w] ? pagewin_table(c->pd[w], c->va[w]) : 0;
        c->frames[w] = (uint32_t)memory_alloc(c->pages * PAGE_SIZE, PAGE_SIZE);
        if (!c->table[w] || !c->frames[w])
            return false;
    }
    return true;
}

static void run(struct bench_ctx *ctx)
{
    uint32_t ks[PARALLEL_COUNTS_MAX], nk = parallel_counts(ks);
    uint32_t reps = bench_reps(ctx, CR_DEF_ASLOCK_REPS);
    bench_plan(ctx, nk * OPS * SPACES);
    pagewin_on_fault(demand_fault);
    for (uint32_t op = 0; op < OPS; op++) {
        for (uint32_t i = 0; i < nk; i++) {
            struct region_mark mark;
            memory_mark(&mark);
            static struct bench_case bcs[SPACES];
            static struct bench_item items[SPACES];
            bool ok = true;
            for (uint32_t s = 0; s < SPACES && ok; s++) {
                struct as_case *c = &cases_[s];
                ok = build(c, (enum space)s, (enum op)op, ks[i], reps);
                uint64_t per = (uint64_t)ks[i] * c->pages * (op == OP_FAULT ? 1 : 2 * (uint64_t)reps);
                bcs[s] = (struct bench_case){ .name = op_names[op], .per = per };
                add(&bcs[s], (struct bench_param)PARAM_STR("space", space_names[s]));
                add(&bcs[s], (struct bench_param)PARAM_NUM("cpus", ks[i]));
                parallel_sweep_params(&bcs[s], ks[i]);
                add(&bcs[s], (struct bench_param)PARAM_NUM("pages", c->pages));
                if (op == OP_MAP)
                    add(&bcs[s], (struct bench_param)PARAM_NUM("reps", reps));
                add(&bcs[s], (struct bench_param)PARAM_STR("lock", "rw"));
                items[s] = (struct bench_item){ .c = &bcs[s], .fn = run_case, .arg = c, .late_params = late,
                                                .hook_arg = c };
            }
            if (ok) {
                bench_measure_set(ctx, items, SPACES);
            } else {
                for (uint32_t s = 0; s < SPACES; s++)
                    bench_skip(ctx, op_names[op], "no memory for the page tables and frames");
            }
            parallel_settle(); /* every CPU back on the kernel's directory before its memory goes */
            memory_release(&mark);
        }
    }
    pagewin_on_fault(0);
}

static const char *unavailable(const struct config *cfg)
{
    (void)cfg;
    const char *why = pagewin_unavailable(smp_cpus());
    return why ? why : parallel_unavailable(2);
}

const struct bench bench_aslock = {
    .name = "aslock",
    .what = "map/unmap and demand faults on k CPUs under one shared address-space lock vs one per space",
    .in_smp = true,
    .needs_paging = true,
    .unavailable = unavailable,
    .run = run,
};
