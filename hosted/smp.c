/* kernel/smp.h for a process: one pthread per CPU beyond the first, each
 * pinned (its affinity set before it starts) to its own CPU of those the
 * process may use (the tool's taskset list), waiting on its mailbox:
 * spinning with pause for a while (a post is then picked up within a
 * microsecond or so), then sleeping on a futex so an idle run does not keep
 * the other CPUs busy. The caller is CPU 0, pinned to the first CPU of the
 * list; its waits for a worker spin as long, then sleep too, so that CPUs
 * a case does not use are idle.
 *
 * oversubscribe=1 lets cpus=N exceed the CPUs allowed: worker w then runs
 * on allowed CPU w mod n, several to a CPU, and every pause yields
 * (hosted/smp.h) so that a waiting worker lets the one it waits for run. Such
 * a run checks the logic of N CPUs on a machine with fewer (the smp record
 * says shared_cpus); it measures nothing worth reporting. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86.h"
#include "hosted/smp.h"
#include "kernel/error_record.h"
#include "kernel/smp.h"
#include "kernel/smp_report.h"
#include "lib/fmt.h"

/* About 10-50 ms of pause before a worker, or the caller waiting for one, sleeps. */
#define SPIN_BEFORE_SLEEP 200000u

struct slot {
    volatile uint32_t posted, finished;
    volatile uint32_t caller_sleeps; /* smp_wait sleeps on `finished`: the worker wakes it */
    void (*volatile fn)(void *);
    void *volatile arg;
    uint32_t index, os_cpu;
    pthread_t thread;
} __attribute__((aligned(64)));

static struct slot slots[SMP_MAX_CPUS];
static struct smp_summary summary = { .wanted = 1, .found = 0, .used = 1 };
static __thread uint32_t this_index;
volatile unsigned int hosted_wait_yields;

const struct smp_summary *smp_summary(void) { return &summary; }
uint32_t smp_cpus(void) { return summary.used; }
uint32_t smp_this_cpu(void) { return this_index; }

void hosted_wait_yield(void) { sched_yield(); }

static long futex(volatile uint32_t *addr, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, timeout, NULL, 0);
}

static void *worker(void *p)
{
    struct slot *s = p;
    this_index = s->index;
    for (;;) {
        uint32_t seen = s->finished;
        for (uint32_t i = 0; s->posted == seen; i++) {
            if (i < SPIN_BEFORE_SLEEP)
                cpu_pause();
            else
                futex(&s->posted, FUTEX_WAIT_PRIVATE, seen, 0);
        }
        s->fn(s->arg);
        __atomic_store_n(&s->finished, s->posted, __ATOMIC_SEQ_CST);
        /* the caller sets caller_sleeps, then reads finished: one of the two sees the other */
        if (__atomic_load_n(&s->caller_sleeps, __ATOMIC_SEQ_CST))
            futex(&s->finished, FUTEX_WAKE_PRIVATE, 1, 0);
    }
    return 0;
}

/* The OS CPUs this process may use, in order; how many. */
static uint32_t allowed_cpus(uint32_t os[SMP_MAX_CPUS], uint32_t *total)
{
    cpu_set_t allowed;
    uint32_t n = 0;
    *total = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 0;
    for (uint32_t c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            if (n < SMP_MAX_CPUS)
                os[n++] = c;
            (*total)++;
        }
    return n;
}

static bool read_number(uint32_t cpu, const char *what, uint32_t *out)
{
    char path[96];
    fmt(path, sizeof path, "/sys/devices/system/cpu/cpu%u/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    int ok = fscanf(f, "%u", out) == 1;
    fclose(f);
    return ok;
}

/* Each used CPU's core (package and core id), from /sys. */
static void read_cores(void)
{
    for (uint32_t i = 0; i < summary.used; i++) {
        uint32_t package, core;
        if (!read_number(summary.used_ids[i], "physical_package_id", &package) ||
            !read_number(summary.used_ids[i], "core_id", &core))
            return;
        summary.core_ids[i] = package << 16 | (core & 0xffff);
    }
    summary.cores = "sys";
}

static bool start_worker(struct slot *s)
{
    pthread_attr_t attr;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(s->os_cpu, &set);
    bool ok = pthread_attr_init(&attr) == 0;
    /* pinned before it runs a single instruction: a thread that cannot be
     * pinned is never started, so no worker runs on a CPU not its own */
    ok = ok && pthread_attr_setaffinity_np(&attr, sizeof set, &set) == 0 &&
         pthread_create(&s->thread, &attr, worker, s) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}

void smp_init(uint32_t want, bool oversubscribe)
{
    summary.wanted = want;
    summary.apic = "host";
    if (want == 1)
        return;
    char msg[200];
    uint32_t os[SMP_MAX_CPUS], total, n = allowed_cpus(os, &total);
    if (!n) {
        summary.why = "sched_getaffinity failed";
        error_record("cpus", "cpus=: the CPUs this process may use could not be read; running on 1 CPU");
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        summary.found_ids[i] = os[i];
    summary.found = total;
    uint32_t limit = want ? want : n;
    cpu_set_t first;
    CPU_ZERO(&first);
    CPU_SET(os[0], &first);
    sched_setaffinity(0, sizeof first, &first);
    slots[0].os_cpu = os[0];
    summary.used_ids[0] = os[0];
    for (uint32_t i = 1; summary.used < limit && (i < n || (oversubscribe && i < limit)); i++) {
        struct slot *s = &slots[summary.used];
        *s = (struct slot){ .index = summary.used, .os_cpu = os[i % n] };
        if (!start_worker(s)) {
            smp_note_id(summary.failed_ids, &summary.failed, os[i % n]);
            fmt(msg, sizeof msg, "no thread pinned to CPU %u could be started: going on without it", os[i % n]);
            error_record("cpu_start", msg);
            continue;
        }
        summary.used_ids[summary.used++] = os[i % n];
    }
    if (summary.used > n) {
        summary.shared_cpus = n;
        hosted_wait_yields = 1;
    }
    read_cores();
    if (want && summary.used < want) {
        summary.why = "fewer CPUs than cpus= asks for";
        fmt(msg, sizeof msg, "cpus=%u: this process may use %u CPU%s (taskset; tools/cleanroom run --cpus; "
            "oversubscribe=1 shares them): running on %u", want, total, total == 1 ? "" : "s", summary.used);
        error_record("cpus", msg);
    }
}

bool smp_post(uint32_t cpu, void (*fn)(void *), void *arg)
{
    if (cpu == 0 || cpu >= summary.used)
        return false;
    struct slot *s = &slots[cpu];
    if (s->posted != __atomic_load_n(&s->finished, __ATOMIC_ACQUIRE))
        return false;
    s->fn = fn;
    s->arg = arg;
    __atomic_store_n(&s->posted, s->posted + 1, __ATOMIC_RELEASE);
    futex(&s->posted, FUTEX_WAKE_PRIVATE, 1, 0);
    return true;
}


static uint64_t clock_ns(clockid_t id)
{
    struct timespec t;
    if (clock_gettime(id, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool idle(const struct slot *s) { return __atomic_load_n(&s->finished, __ATOMIC_ACQUIRE) == s->posted; }

void smp_wait(uint32_t cpu) { smp_wait_within(cpu, SMP_WAIT_S); }

void smp_wait_within(uint32_t cpu, uint32_t seconds)
{
    if (cpu == 0 || cpu >= summary.used)
        return;
    struct slot *s = &slots[cpu];
    for (uint32_t i = 0; i < SPIN_BEFORE_SLEEP; i++) {
        if (idle(s))
            return;
        cpu_pause();
    }
    uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)seconds * 1000000000u;
    const struct timespec tick = { 0, 100000000 }; /* the deadline is checked every 0.1 s */
    for (;;) {
        uint32_t seen = __atomic_load_n(&s->finished, __ATOMIC_ACQUIRE);
        __atomic_store_n(&s->caller_sleeps, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&s->finished, __ATOMIC_SEQ_CST) == seen && seen != s->posted)
            futex(&s->finished, FUTEX_WAIT_PRIVATE, seen, &tick);
        __atomic_store_n(&s->caller_sleeps, 0, __ATOMIC_RELAXED);
        if (idle(s))
            return;
        if (clock_ns(CLOCK_MONOTONIC) > end)
            smp_report_silent(cpu, "OS CPU", s->os_cpu, seconds);
    }
}

uint64_t smp_preempted(void)
{
    struct rusage u;
    return getrusage(RUSAGE_THREAD, &u) == 0 ? (uint64_t)u.ru_nivcsw : 0;
}

void smp_thread_times(struct smp_thread_times *t)
{
    t->preempted = smp_preempted();
    t->wall_ns = clock_ns(CLOCK_MONOTONIC);
    t->run_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void smp_ipi_handler(void (*fn)(void)) { (void)fn; }
bool smp_ipi_send(uint32_t cpu) { (void)cpu; return false; }
