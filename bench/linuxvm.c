/* bench linuxvm (hosted build only): what PATHREADS measured, Linux's own
 * address-space lock and TLB shootdowns, with k workers pinned one per CPU
 * (worker w on the run's CPU w, kernel/smp.h) as threads of this process
 * or as processes of their own (forked for each sample):
 *
 *   fault          each worker writes `pages` untouched pages of a private
 *                  anonymous mapping of its own, made beforehand: a
 *                  demand-zero fault each. It takes mmap_lock to read up to
 *                  Linux 6.3, a lock of the mapping (VMA) alone from 6.4
 *                  (CONFIG_PER_VMA_LOCK): params.fault_lock says which, from
 *                  the kernel's version (params.kernel)
 *   mmap           each worker maps a page, writes it and unmaps it, reps
 *                  times: mmap_lock to write, twice (munmap flushes the TLB)
 *   mprotect       each worker makes its own page read-only and writable
 *                  again and writes it, reps times: mmap_lock to write; the
 *                  read-only step flushes the TLB
 *   tlb_shootdown  worker 0 alone runs the munmap or the mprotect loop
 *                  (params.op) while the other k-1 CPUs spin: as threads of
 *                  this process (siblings=threads: Linux must interrupt them
 *                  to flush their TLBs, a real shootdown by IPI) or as
 *                  processes of their own (siblings=processes: the same
 *                  CPUs busy, nothing of this address space on them); k=1,
 *                  siblings=none, is the loop alone. Per operation of worker 0.
 *
 * fault, mmap and mprotect are time per operation over all workers (a
 * throughput's inverse); CPUs the case does not use have their threads
 * asleep, so that they hold no part of the address space. A forked
 * worker 0 (the parent) takes a few copy-on-write faults on its own stack
 * in the timed region. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/park.h"
#include "kernel/smp.h"
#include "lib/defaults.h"

#define FAULT_PAGES 1024     /* fault: pages each worker writes per sample */
#define START_SPIN_MS 20     /* the forked workers' start line: spun for this long, then slept for */
#define PAGE 4096u
#define PER_VMA_SINCE_MAJOR 6
#define PER_VMA_SINCE_MINOR 4

enum op { OP_FAULT, OP_MMAP, OP_MPROTECT, OP_SHOOT_MUNMAP, OP_SHOOT_MPROTECT };
enum who { THREADS, PROCESSES, ALONE };
static const char *const who_names[] = { "threads", "processes", "none" };

/* What the workers and the caller share, in a MAP_SHARED page (forked
 * workers see the same one). */
struct control {
    volatile uint32_t go, stop, release;
    volatile uint32_t arrived[SMP_MAX_CPUS];  /* a forked worker: 1 once it waits at the start line */
    volatile uint32_t finished[SMP_MAX_CPUS]; /* a forked worker: 1 once its work is done */
    volatile uint32_t gone[SMP_MAX_CPUS];     /* its launcher: 1 once the child exited (or never forked) */
    uint32_t done[SMP_MAX_CPUS];
    uint64_t own_ticks; /* tlb_shootdown: worker 0's loop */
};

struct lvm_case {
    enum op op;
    enum who who;
    uint32_t k, reps;
    uint8_t *region;     /* fault, mprotect: worker w's pages at region + w * stride */
    uint32_t stride;
    uint32_t cut, failed;
};

static struct control *ctl;
static char kernel_release[65];

/* --- the workers ------------------------------------------------------------------ */

static void spin_until_stop(void)
{
    uint32_t sink = 0;
    while (!ctl->stop)
        sink += ctl->stop, cpu_pause();
    (void)sink;
}

/* The munmap or the mprotect loop; returns the iterations done. */
static uint32_t vm_loop(enum op op, uint8_t *own, uint32_t reps)
{
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint32_t i = 0;
    for (; i < reps && parallel_budget_left(&b, i); i++) {
        if (op == OP_MMAP || op == OP_SHOOT_MUNMAP) {
            volatile uint8_t *p = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                break;
            p[0] = (uint8_t)i;
            munmap((void *)p, PAGE);
        } else {
            mprotect(own, PAGE, PROT_READ);
            mprotect(own, PAGE, PROT_READ | PROT_WRITE);
            *(volatile uint8_t *)own = (uint8_t)i;
        }
    }
    return i;
}

static void work(uint32_t w, void *arg)
{
    struct lvm_case *c = arg;
    uint8_t *own = c->region ? c->region + (uint64_t)w * c->stride : 0;
    switch (c->op) {
    case OP_FAULT:
        for (uint32_t i = 0; i < FAULT_PAGES; i++)
            own[(uint64_t)i * PAGE] = (uint8_t)i;
        ctl->done[w] = FAULT_PAGES;
        break;
    case OP_MMAP:
    case OP_MPROTECT:
        ctl->done[w] = vm_loop(c->op, own, c->reps);
        break;
    default: /* tlb_shootdown: worker 0 works, the others keep their CPUs busy */
        if (w) {
            spin_until_stop();
            break;
        }
        uint64_t t0 = tsc_begin();
        ctl->done[0] = vm_loop(c->op, own, c->reps);
        ctl->own_ticks = tsc_end() - t0;
        ctl->stop = 1;
        break;
    }
}

/* --- k processes from one start line --------------------------------------------- */

struct launch {
    struct lvm_case *c;
    uint32_t w;
    volatile int failed;
};

/* On CPU w's thread: a child (pinned as the thread is) does the work; the
 * thread sleeps in waitpid meanwhile, so the CPU is the child's. Whatever
 * becomes of the child (done, killed, never forked), the thread says it is
 * gone, so that nobody waits for a worker that no longer exists. */
static void launcher(void *arg)
{
    struct launch *l = arg;
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* never outlive the run: a child of a run that ended (by name, or
         * killed) would spin on its CPU for ever */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        __atomic_store_n(&ctl->arrived[l->w], 1, __ATOMIC_RELEASE);
        while (!ctl->go)
            cpu_pause();
        work(l->w, l->c);
        __atomic_store_n(&ctl->finished[l->w], 1, __ATOMIC_RELEASE);
        _exit(0);
    }
    l->failed = pid < 0;
    if (pid > 0) /* else nobody will come: gone at once, the start line does not wait for it */
        while (waitpid(pid, 0, 0) < 0 && errno == EINTR)
            ;
    __atomic_store_n(&ctl->gone[l->w], 1, __ATOMIC_RELEASE);
}

/* Until every forked worker finished or is gone (bounded: the sample's work
 * is bounded by its time limit, parallel_budget); how many are gone
 * without finishing their work. */
static uint32_t await_children(uint32_t k)
{
    uint64_t deadline = parallel_deadline();
    for (uint32_t w = 1; w < k; w++)
        while (!ctl->finished[w] && !ctl->gone[w] && rdtsc() < deadline)
            cpu_pause();
    uint32_t lost = 0;
    for (uint32_t w = 1; w < k; w++)
        lost += !ctl->finished[w];
    return lost;
}

/* How many of workers 1 .. k-1 neither wait at the start line nor are gone
 * (a fork that failed, a child that died: params.failed counts those);
 * missing[w] says which. */
static uint32_t not_at_start_line(uint32_t k, bool *missing)
{
    uint32_t n = 0;
    for (uint32_t w = 1; w < k; w++)
        n += missing[w] = !ctl->arrived[w] && !ctl->gone[w];
    return n;
}

static int64_t procs_run(struct lvm_case *c)
{
    static struct launch launches[SMP_MAX_CPUS];
    static uint32_t cpus[SMP_MAX_CPUS];
    bool posted[SMP_MAX_CPUS] = { false }, missing[SMP_MAX_CPUS] = { false };
    for (uint32_t w = 1; w < c->k; w++) {
        cpus[w] = w;
        launches[w] = (struct launch){ c, w, 0 };
        posted[w] = smp_post(w, launcher, &launches[w]);
        if (!posted[w]) {
            launches[w].failed = 1;
            ctl->gone[w] = 1;
        }
    }
    /* forks take a millisecond or two: spun for, then slept for a millisecond at a time, so that a child
     * late by seconds (a loaded machine, or one that never comes) costs no CPU */
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : 1000000000ull, t = rdtsc();
    const struct timespec ms = { 0, 1000000 };
    while (not_at_start_line(c->k, missing) && rdtsc() - t < PARALLEL_START_LINE_S * hz) {
        if (rdtsc() - t < hz / 1000 * START_SPIN_MS)
            cpu_pause();
        else
            nanosleep(&ms, 0);
    }
    if (not_at_start_line(c->k, missing)) { /* bounded, and named: a child stopped or never scheduled */
        ctl->stop = 1; /* what the children do once let go ends at once (tlb_shootdown's spin) */
        parallel_start_line_short(cpus, c->k, missing, posted, &ctl->go);
    }
    uint64_t t0 = tsc_begin();
    ctl->go = 1;
    work(0, c);
    uint32_t lost = await_children(c->k);
    int64_t ticks = (int64_t)(tsc_end() - t0);
    c->failed += lost;
    for (uint32_t w = 1; w < c->k; w++)
        smp_wait_within(w, PARALLEL_START_LINE_S); /* each child finished or is gone: its thread ends at once */
    return ticks;
}

/* --- one sample --------------------------------------------------------------------- */

static void sleep_until_released(void *arg)
{
    (void)arg;
    park_wait(&ctl->release, 0);
}

/* Worker w's pages: its own mapping, a PROT_NONE page between two
 * workers' so that they never merge into one VMA. */
static bool map_regions(struct lvm_case *c)
{
    uint32_t pages = c->op == OP_FAULT ? FAULT_PAGES : 1;
    c->stride = (pages + 1) * PAGE;
    void *r = mmap(0, (size_t)c->stride * c->k, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (r == MAP_FAILED)
        return false;
    madvise(r, (size_t)c->stride * c->k, MADV_NOHUGEPAGE);
    c->region = r;
    for (uint32_t w = 0; w < c->k; w++) {
        mprotect(c->region + (uint64_t)w * c->stride + (uint64_t)pages * PAGE, PAGE, PROT_NONE);
        if (c->op != OP_FAULT) /* the loops' page exists before they start */
            c->region[(uint64_t)w * c->stride] = 1;
    }
    return true;
}

static int64_t run_case(void *arg)
{
    struct lvm_case *c = arg;
    uint32_t n = smp_cpus();
    memset(ctl, 0, sizeof *ctl);
    c->region = 0;
    bool regions = c->op == OP_MMAP || c->op == OP_SHOOT_MUNMAP || map_regions(c);
    for (uint32_t w = c->k; w < n; w++)
        smp_post(w, sleep_until_released, 0); /* a CPU that is not idle is named by smp_wait_within below */
    int64_t t = 0;
    if (regions)
        t = c->who == PROCESSES ? procs_run(c) : parallel_run(c->k, work, c);
    /* every sleeper at once (they share one word), then each back to idle:
     * waking one per wait would leave the others asleep for ever */
    __atomic_store_n(&ctl->release, 1, __ATOMIC_RELEASE);
    park_wake_all(&ctl->release);
    for (uint32_t w = c->k; w < n; w++)
        smp_wait_within(w, PARALLEL_START_LINE_S);
    if (c->region)
        munmap(c->region, (size_t)c->stride * c->k);
    c->failed += !regions;
    bool shoot = c->op == OP_SHOOT_MUNMAP || c->op == OP_SHOOT_MPROTECT;
    uint64_t planned = c->op == OP_FAULT ? FAULT_PAGES : c->reps, done = ctl->done[0];
    if (shoot)
        t = (int64_t)ctl->own_ticks;
    else
        for (uint32_t w = 1; w < c->k; w++)
            done += ctl->done[w];
    if (!shoot)
        planned *= c->k;
    c->cut += done < planned;
    return parallel_scaled(t, planned, done);
}

/* --- the benchmark ------------------------------------------------------------------- */

static void add(struct bench_case *c, struct bench_param p) { c->params[c->nparams++] = p; }

static void late(struct bench_case *bc, void *hook_arg)
{
    struct lvm_case *c = hook_arg;
    add(bc, (struct bench_param)PARAM_NUM("cut", c->cut));
    add(bc, (struct bench_param)PARAM_NUM("failed", c->failed));
}

/* 6.4 and later: a page fault locks its VMA, not the whole address space. */
static const char *fault_lock(void)
{
    unsigned major = 0, minor = 0;
    if (sscanf(kernel_release, "%u.%u", &major, &minor) != 2)
        return "unknown";
    bool per_vma = major > PER_VMA_SINCE_MAJOR || (major == PER_VMA_SINCE_MAJOR && minor >= PER_VMA_SINCE_MINOR);
    return per_vma ? "per_vma" : "mmap_lock";
}

struct plan {
    const char *name;
    enum op op;
    const char *op_name; /* tlb_shootdown's params.op */
};

static const struct plan plans[] = {
    { "fault", OP_FAULT, 0 },
    { "mmap", OP_MMAP, 0 },
    { "mprotect", OP_MPROTECT, 0 },
    { "tlb_shootdown", OP_SHOOT_MUNMAP, "munmap" },
    { "tlb_shootdown", OP_SHOOT_MPROTECT, "mprotect" },
};
#define NPLANS (sizeof plans / sizeof plans[0])

/* One k of one plan: threads and processes in turn (k=1 of tlb_shootdown: alone). */
static void measure(struct bench_ctx *ctx, const struct plan *p, uint32_t k, uint32_t reps)
{
    static struct lvm_case cases[2];
    static struct bench_case bcs[2];
    static struct bench_item items[2];
    bool shoot = p->op_name != 0;
    uint32_t m = shoot && k == 1 ? 1 : 2;
    for (uint32_t i = 0; i < m; i++) {
        enum who who = m == 1 ? ALONE : (enum who)i;
        cases[i] = (struct lvm_case){ .op = p->op, .who = who, .k = k, .reps = reps };
        uint64_t per = p->op == OP_FAULT ? (uint64_t)k * FAULT_PAGES : shoot ? reps : (uint64_t)k * reps;
        bcs[i] = (struct bench_case){ .name = p->name, .per = per };
        if (shoot)
            add(&bcs[i], (struct bench_param)PARAM_STR("op", p->op_name));
        add(&bcs[i], (struct bench_param)PARAM_STR(shoot ? "siblings" : "workers", who_names[who]));
        add(&bcs[i], (struct bench_param)PARAM_NUM("cpus", k));
        parallel_sweep_params(&bcs[i], k);
        add(&bcs[i], (struct bench_param)PARAM_NUM(p->op == OP_FAULT ? "fault_pages" : "reps", p->op == OP_FAULT ? FAULT_PAGES : reps));
        add(&bcs[i], (struct bench_param)PARAM_STR("kernel", kernel_release));
        add(&bcs[i], (struct bench_param)PARAM_STR("fault_lock", fault_lock()));
        items[i] = (struct bench_item){ .c = &bcs[i], .fn = run_case, .arg = &cases[i], .late_params = late,
                                        .hook_arg = &cases[i] };
    }
    bench_measure_set(ctx, items, m);
}

static void run(struct bench_ctx *ctx)
{
    uint32_t ks[PARALLEL_COUNTS_MAX], nk = parallel_counts(ks);
    uint32_t reps = bench_reps(ctx, CR_DEF_LINUXVM_REPS);
    struct utsname u;
    snprintf(kernel_release, sizeof kernel_release, "%s", uname(&u) == 0 ? u.release : "unknown");
    ctl = mmap(0, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED) {
        ctl = 0;
        bench_plan(ctx, 1);
        bench_skip(ctx, "linuxvm", "no shared page for the workers (mmap MAP_SHARED failed)");
        return;
    }
    uint32_t total = 0;
    for (uint32_t j = 0; j < NPLANS; j++)
        for (uint32_t i = 0; i < nk; i++)
            total += plans[j].op_name && ks[i] == 1 ? 1 : 2;
    bench_plan(ctx, total);
    for (uint32_t j = 0; j < NPLANS; j++)
        for (uint32_t i = 0; i < nk; i++)
            measure(ctx, &plans[j], ks[i], reps);
    munmap(ctl, sizeof *ctl);
    ctl = 0;
}

const struct bench bench_linuxvm = {
    .name = "linuxvm",
    .what = "Linux's address-space lock and TLB shootdowns: page faults, mmap, mprotect, threads vs processes",
    .in_smp = true,
    .unavailable = parallel_needs_two,
    .run = run,
};
