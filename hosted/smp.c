/* kernel/smp.h for a process: one pthread per CPU beyond the first, each
 * pinned (sched_setaffinity) to its own CPU of those the process may use
 * (the tool's taskset list), waiting on its mailbox: spinning with pause
 * for a while (a post is then picked up within a microsecond or so), then
 * sleeping on a futex so an idle run does not keep the other CPUs busy.
 * The caller is CPU 0, pinned to the first CPU of the list. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/error_record.h"
#include "kernel/smp.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/wire.h"

/* About 10-50 ms of pause before a worker sleeps. */
#define SPIN_BEFORE_SLEEP 200000u

struct slot {
    volatile uint32_t posted, finished;
    void (*volatile fn)(void *);
    void *volatile arg;
    uint32_t index, os_cpu;
    pthread_t thread;
} __attribute__((aligned(64)));

static struct slot slots[SMP_MAX_CPUS];
static struct smp_summary summary = { .wanted = 1, .found = 0, .used = 1 };
static __thread uint32_t this_index;

const struct smp_summary *smp_summary(void) { return &summary; }
uint32_t smp_cpus(void) { return summary.used; }
uint32_t smp_this_cpu(void) { return this_index; }

static void futex(volatile uint32_t *addr, int op, uint32_t val)
{
    syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

static bool pin(pthread_t t, uint32_t os_cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(os_cpu, &set);
    return pthread_setaffinity_np(t, sizeof set, &set) == 0;
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
                futex(&s->posted, FUTEX_WAIT_PRIVATE, seen);
        }
        s->fn(s->arg);
        __atomic_store_n(&s->finished, s->posted, __ATOMIC_RELEASE);
    }
    return 0;
}


void smp_init(uint32_t want)
{
    summary.wanted = want;
    summary.apic = "host";
    if (want == 1)
        return;
    cpu_set_t allowed;
    char msg[200];
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        summary.why = "sched_getaffinity failed";
        error_record("cpus", "cpus=: the CPUs this process may use could not be read; running on 1 CPU");
        return;
    }
    uint32_t n = 0, os[SMP_MAX_CPUS];
    for (uint32_t c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            if (n < SMP_MAX_CPUS)
                os[n] = c;
            n++;
        }
    summary.found = n;
    for (uint32_t i = 0; i < n && i < SMP_MAX_CPUS; i++)
        summary.found_ids[i] = os[i];
    uint32_t limit = want ? want : SMP_MAX_CPUS;
    pin(pthread_self(), os[0]);
    slots[0].os_cpu = os[0];
    summary.used_ids[0] = os[0];
    for (uint32_t i = 1; i < n && i < SMP_MAX_CPUS && summary.used < limit; i++) {
        struct slot *s = &slots[summary.used];
        *s = (struct slot){ .index = summary.used, .os_cpu = os[i] };
        if (pthread_create(&s->thread, 0, worker, s) != 0 || !pin(s->thread, os[i])) {
            summary.failed_ids[summary.failed++] = os[i];
            fmt(msg, sizeof msg, "no pinned thread could be started on CPU %u: going on without it", os[i]);
            error_record("cpu_start", msg);
            continue;
        }
        summary.used_ids[summary.used++] = os[i];
    }
    if (want && summary.used < want) {
        summary.why = "fewer CPUs than cpus= asks for";
        fmt(msg, sizeof msg, "cpus=%u: this process may use %u CPU%s (taskset; tools/cleanroom run --cpus): running on %u",
            want, n, n == 1 ? "" : "s", summary.used);
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
    futex(&s->posted, FUTEX_WAKE_PRIVATE, 1);
    return true;
}

void smp_wait(uint32_t cpu)
{
    if (cpu == 0 || cpu >= summary.used)
        return;
    struct slot *s = &slots[cpu];
    while (__atomic_load_n(&s->finished, __ATOMIC_ACQUIRE) != s->posted)
        cpu_pause();
}

uint64_t smp_switched_out(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) != 0)
        return 0;
    return (uint64_t)u.ru_nvcsw + (uint64_t)u.ru_nivcsw;
}

void smp_ipi_handler(void (*fn)(void)) { (void)fn; }
bool smp_ipi_send(uint32_t cpu) { (void)cpu; return false; }
